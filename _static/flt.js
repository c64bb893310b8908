// Marks every box whose content is wider than the box (display equations, code, tables)
// with the class "flt-scroll-cue", which flt.css turns into visible edge shadows, and makes
// it reachable by keyboard. Runs on load, after MathJax has typeset, and on resize.
(function () {
  "use strict";
  var SELECTOR = [
    'div.math > mjx-container[display="true"]',
    "div.cell_input pre",
    "div.cell_output pre",
    "div.highlight pre",
    ".bd-article .table-wrapper",
    ".bd-article pre",
  ].join(", ");

  function backgroundOf(el) {
    for (var node = el; node && node.nodeType === 1; node = node.parentElement) {
      var bg = getComputedStyle(node).backgroundColor;
      if (bg && bg !== "transparent" && !/rgba\(.*,\s*0\)$/.test(bg)) return bg;
    }
    return "";
  }

  function mark() {
    document.querySelectorAll(SELECTOR).forEach(function (el) {
      var over = el.scrollWidth > el.clientWidth + 1;
      if (over && !el.classList.contains("flt-scroll-cue")) {
        var bg = backgroundOf(el.parentElement);
        var own = getComputedStyle(el).backgroundColor;
        if (own && own !== "transparent" && !/rgba\(.*,\s*0\)$/.test(own)) bg = own;
        if (bg) el.style.setProperty("--flt-cue-bg", bg);
        if (!el.hasAttribute("tabindex")) el.setAttribute("tabindex", "0");
        el.classList.add("flt-scroll-cue");
      } else if (!over && el.classList.contains("flt-scroll-cue")) {
        el.classList.remove("flt-scroll-cue");
      }
    });
  }

  var pending = null;
  function later() {
    if (pending) clearTimeout(pending);
    pending = setTimeout(mark, 150);
  }

  window.fltMarkOverflow = mark;
  document.addEventListener("DOMContentLoaded", mark);
  window.addEventListener("load", function () {
    mark();
    var mj = window.MathJax;
    if (mj && mj.startup && mj.startup.promise) mj.startup.promise.then(mark);
    if (window.ResizeObserver) {
      var article = document.querySelector("article") || document.body;
      new ResizeObserver(later).observe(article);
    }
  });
  window.addEventListener("resize", later);
})();

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

// ---- Figures on a phone: a tap opens the figure at full size ------------------------------
// A figure 640 px wide in the column is shown 358 px wide on a 390 px phone, with legends
// about 5 px tall. Every figure image (notebook outputs and {figure}s) becomes a link to its
// PNG, which the phone shows at full resolution and lets the reader zoom.
(function () {
  "use strict";
  function linkFigures() {
    var imgs = document.querySelectorAll(
      ".bd-article div.cell_output img, .bd-article figure img"
    );
    imgs.forEach(function (img) {
      if (img.closest("a")) return;
      var src = img.getAttribute("src");
      if (!src || src.indexOf("data:") === 0) return;
      var a = document.createElement("a");
      a.href = src;
      a.className = "flt-figure-link";
      a.title = "Open the figure at full size";
      img.parentNode.insertBefore(a, img);
      a.appendChild(img);
    });
  }
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", linkFigures);
  } else {
    linkFigures();
  }
})();

// ---- Search ------------------------------------------------------------------------------
// Sphinx scores a page by its best-matching word, so for "token selection" every page with
// "selection" in a section title tied with Section 7.6 ("Token selection in single-head
// attention") and the tie went alphabetically. A page whose title holds the whole query
// ranks first. Sphinx's searchtools.js keeps a Scorer defined before it loads.
window.Scorer = {
  score: function (result) {
    var title = (result[1] || "").toLowerCase();
    var anchor = result[2];
    var score = result[4];
    var query = (new URLSearchParams(window.location.search).get("q") || "")
      .toLowerCase()
      .replace(/\s+/g, " ")
      .trim();
    if (query && query.indexOf(" ") > 0 && !anchor && title.indexOf(query) >= 0) {
      return score + 30;
    }
    return score;
  },
  objNameMatch: 11,
  objPartialMatch: 6,
  objPrio: { 0: 15, 1: 5, 2: -5 },
  objPrioDefault: 0,
  title: 15,
  partialTitle: 7,
  term: 5,
  partialTerm: 2,
};

// Snippets: Sphinx takes a result's text from the page's [role="main"], which in this theme
// also holds the header's buttons (".pdf", ".ipynb") and the page's own contents list (the
// print-only "Contents", .onlyprint). Drop them before the snippet is cut.
(function () {
  "use strict";
  var DROP = [
    ".headerlink", "script", "style", ".bd-header-article", ".header-article-items",
    ".bd-sidebar-secondary", ".bd-toc", ".onthispage", ".prev-next-area",
    ".bd-footer-article", "button", ".dropdown-menu", ".onlyprint", ".bd-footer-content",
  ].join(", ");
  function patch() {
    if (typeof Search === "undefined" || Search._fltPatched) return;
    Search._fltPatched = true;
    Search.htmlToText = function (htmlString, anchor) {
      var doc = new DOMParser().parseFromString(htmlString, "text/html");
      doc.querySelectorAll(DROP).forEach(function (el) { el.remove(); });
      var main = doc.querySelector('[role="main"]');
      if (anchor && main) {
        var block = main.querySelector(anchor);
        if (block) return block.textContent;
      }
      return main ? main.textContent : "";
    };
  }
  patch();
  document.addEventListener("DOMContentLoaded", patch);
})();

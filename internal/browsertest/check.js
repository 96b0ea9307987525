// check.js is what browsertest.Check injects into its copy of a page. It
// records script errors, console.error calls and failed loads from the
// start, and once the page has loaded it looks at the layout and at the
// required selectors and writes what it found, as JSON, into a <pre> the
// dumped DOM carries back to Go. The page itself is left as it is until
// then, so the check sees what a reader sees.
(function () {
  "use strict";
  var RESULT_ID = "kvsim-browsertest-result";
  var SVG_NS = "http://www.w3.org/2000/svg";
  var OVERLAPS = 20; // overlapping pairs reported; the rest are counted
  var required = (document.currentScript && JSON.parse(document.currentScript.dataset.required || "[]")) || [];

  var errors = [];
  var seen = new Set();
  function addError(s) {
    if (!seen.has(s)) {
      seen.add(s);
      errors.push(s);
    }
  }

  function fmt(v) {
    if (v instanceof Error) return v.stack || String(v);
    if (typeof v === "string") return v;
    try {
      return JSON.stringify(v);
    } catch (e) {
      return String(v);
    }
  }

  // The network: any URL with a host, fetched or referenced for fetching.
  var network = new Map();
  function isNetwork(url) {
    return /^\s*(https?:|wss?:|ftp:)?\/\/[^\/]/i.test(url || "") && !/^\s*file:/i.test(url);
  }
  function addNetwork(url, how) {
    if (!network.has(url)) network.set(url, how);
  }

  var consoleError = console.error;
  console.error = function () {
    addError("console.error: " + Array.prototype.map.call(arguments, fmt).join(" "));
    return consoleError.apply(console, arguments);
  };
  window.addEventListener("error", function (e) {
    var t = e.target;
    if (t && t !== window && t.nodeType === 1) {
      var url = t.currentSrc || t.src || t.href || t.getAttribute("src") || t.getAttribute("href") || "";
      if (typeof url !== "string") url = String(url.baseVal || url);
      if (isNetwork(url)) addNetwork(url, describe(t));
      else addError("failed to load " + url + " (" + describe(t) + ")");
      return;
    }
    addError(e.message + (e.filename ? " at " + e.filename + ":" + e.lineno : ""));
  }, true);
  window.addEventListener("unhandledrejection", function (e) {
    addError("unhandled promise rejection: " + fmt(e.reason));
  });
  if (performance.setResourceTimingBufferSize) performance.setResourceTimingBufferSize(100000);

  function describe(el) {
    var s = el.tagName.toLowerCase();
    if (el.id) s += "#" + el.id;
    var cls = el.getAttribute("class");
    if (cls && cls.trim()) s += "." + cls.trim().split(/\s+/).join(".");
    var text = el.getAttribute("aria-label");
    if (!text && el.namespaceURI === SVG_NS) {
      var title = el.querySelector("title");
      text = title ? title.textContent : el.textContent;
    }
    if (!text) text = el.innerText === undefined ? el.textContent : el.innerText;
    text = (text || "").replace(/\s+/g, " ").trim();
    if (text.length > 40) text = text.slice(0, 40) + "…";
    return "<" + s + ">" + (text ? ' "' + text + '"' : "");
  }

  function visible(el) {
    if (el.checkVisibility && !el.checkVisibility({ opacityProperty: true, visibilityProperty: true, checkOpacity: true, checkVisibilityCSS: true })) return false;
    var r = el.getBoundingClientRect();
    return r.width > 0 && r.height > 0;
  }

  function px(v) {
    return Math.round(v) + " px";
  }

  function layoutProblems() {
    var out = [];
    var root = document.documentElement;
    var vw = root.clientWidth;
    if (root.scrollWidth > vw + 1) {
      out.push("the page scrolls sideways: its content is " + px(root.scrollWidth) + " wide in a viewport " + px(vw) + " wide");
    }

    // Elements past the page's edges. A container that scrolls sideways on
    // purpose (overflow-x auto or scroll) may hold wider content; an
    // element reported is not reported again for its descendants.
    var reported = new Set();
    var quiet = new Map(); // element -> its descendants are not checked
    function skipInside(el) {
      if (!el || el === root || el === document.body) return false;
      if (quiet.has(el)) return quiet.get(el);
      var ox = getComputedStyle(el).overflowX;
      var v = ox === "auto" || ox === "scroll" || reported.has(el) || el.namespaceURI === SVG_NS || skipInside(el.parentElement);
      quiet.set(el, v);
      return v;
    }
    var all = document.body ? document.body.querySelectorAll("*") : [];
    for (var i = 0; i < all.length; i++) {
      var el = all[i];
      if (el.id === RESULT_ID || skipInside(el.parentElement)) continue;
      var r = el.getBoundingClientRect();
      if (r.width === 0 && r.height === 0) continue;
      if (r.right > vw + 1 && visible(el)) {
        reported.add(el);
        out.push(describe(el) + " reaches " + px(r.right - vw) + " past the right edge of the page (" + px(vw) + " wide)");
      } else if (r.left < -1 && visible(el)) {
        reported.add(el);
        out.push(describe(el) + " starts " + px(-r.left) + " before the left edge of the page");
      }
    }

    // Charts: every outermost <svg> shown has a size, draws something and
    // fits in its container.
    document.querySelectorAll("svg").forEach(function (svg) {
      if (svg.ownerSVGElement) return;
      if (svg.checkVisibility && !svg.checkVisibility({ visibilityProperty: true, checkVisibilityCSS: true })) return;
      var r = svg.getBoundingClientRect();
      if (!(r.width > 0 && r.height > 0)) {
        out.push(describe(svg) + " is drawn " + Math.round(r.width) + "×" + Math.round(r.height) + " px: a chart needs a width and a height");
        return;
      }
      var box = null;
      try {
        box = svg.getBBox();
      } catch (e) {}
      if (box && box.width === 0 && box.height === 0) out.push(describe(svg) + " draws nothing");
      var p = svg.parentElement;
      if (!p || reported.has(svg) || skipInside(p)) return;
      var pr = p.getBoundingClientRect();
      var cs = getComputedStyle(p);
      var right = pr.right - parseFloat(cs.borderRightWidth) - parseFloat(cs.paddingRight);
      if (r.right > right + 1) out.push(describe(svg) + " is " + px(r.right - right) + " wider than its container " + describe(p));
    });

    return out.concat(overlaps());
  }

  // overlaps reports text drawn over other text: the boxes of the lines of
  // every visible text (one box per SVG <text>), swept top to bottom, two
  // boxes overlapping by more than 2 px across and, down, by more than 2 px
  // and 30% of the shorter line (so tight line spacing is not overlap).
  // Text of one element and of its descendants is never compared.
  function overlaps() {
    var items = [];
    var svgDone = new Set();
    var range = document.createRange();
    var walker = document.createTreeWalker(document.body || document.documentElement, NodeFilter.SHOW_TEXT);
    var vis = new Map();
    function shown(el) {
      if (!vis.has(el)) vis.set(el, !el.checkVisibility || el.checkVisibility({ opacityProperty: true, visibilityProperty: true, checkOpacity: true, checkVisibilityCSS: true }));
      return vis.get(el);
    }
    for (var n = walker.nextNode(); n; n = walker.nextNode()) {
      if (!/\S/.test(n.data)) continue;
      var p = n.parentElement;
      if (!p || p.id === RESULT_ID || /^(script|style|title|desc|noscript|template)$/i.test(p.tagName) || !shown(p)) continue;
      if (p.namespaceURI === SVG_NS) {
        var owner = p.closest("text") || p;
        if (svgDone.has(owner)) continue;
        svgDone.add(owner);
        add(owner, owner.getBoundingClientRect());
        continue;
      }
      range.selectNodeContents(n);
      var rects = range.getClientRects();
      for (var j = 0; j < rects.length; j++) add(p, rects[j]);
    }
    function add(owner, r) {
      if (r.width > 0.5 && r.height > 0.5) items.push({ owner: owner, top: r.top, bottom: r.bottom, left: r.left, right: r.right });
    }
    items.sort(function (a, b) {
      return a.top - b.top;
    });
    var out = [];
    var more = 0;
    var pairs = new Set();
    var ids = new Map();
    function id(el) {
      if (!ids.has(el)) ids.set(el, ids.size);
      return ids.get(el);
    }
    var active = [];
    items.forEach(function (it) {
      active = active.filter(function (a) {
        return a.bottom - it.top > 2;
      });
      active.forEach(function (a) {
        if (a.owner === it.owner) return;
        var across = Math.min(a.right, it.right) - Math.max(a.left, it.left);
        var down = Math.min(a.bottom, it.bottom) - Math.max(a.top, it.top);
        if (across <= 2 || down <= Math.max(2, 0.3 * Math.min(a.bottom - a.top, it.bottom - it.top))) return;
        if (a.owner.contains(it.owner) || it.owner.contains(a.owner)) return;
        var key = Math.min(id(a.owner), id(it.owner)) + " " + Math.max(id(a.owner), id(it.owner));
        if (pairs.has(key)) return;
        pairs.add(key);
        if (out.length < OVERLAPS) out.push("text of " + describe(a.owner) + " and of " + describe(it.owner) + " overlap by " + Math.round(across) + "×" + Math.round(down) + " px");
        else more++;
      });
      active.push(it);
    });
    if (more) out.push("and " + more + " more overlapping pairs of text");
    return out;
  }

  function missing() {
    var out = [];
    required.forEach(function (sel) {
      var els;
      try {
        els = document.querySelectorAll(sel);
      } catch (e) {
        out.push(sel + ": not a valid selector");
        return;
      }
      if (els.length === 0) out.push(sel + ": matches nothing");
      else if (!Array.prototype.some.call(els, visible)) out.push(sel + ": matches " + els.length + " element(s), none of them visible");
    });
    return out;
  }

  // Links, sources and styles that name a host: a reader's browser would
  // fetch them even where this one did not get to.
  function references() {
    document.querySelectorAll("[src], [srcset], [href], [poster], [data], [style]").forEach(function (el) {
      var tag = el.tagName.toLowerCase();
      ["src", "poster", "data", "href", "xlink:href"].forEach(function (a) {
        var v = el.getAttribute(a);
        if (a.indexOf("href") >= 0 && (tag === "a" || tag === "area")) return; // a hyperlink, fetched only when followed
        if (isNetwork(v)) addNetwork(v.trim(), describe(el));
      });
      (el.getAttribute("srcset") || "").split(",").forEach(function (c) {
        var u = c.trim().split(/\s+/)[0];
        if (isNetwork(u)) addNetwork(u, describe(el));
      });
      urls(el.getAttribute("style"), describe(el));
    });
    document.querySelectorAll("style").forEach(function (el) {
      urls(el.textContent, "<style>");
    });
    performance.getEntriesByType("resource").forEach(function (e) {
      if (isNetwork(e.name)) addNetwork(e.name, e.initiatorType);
    });
  }
  function urls(css, how) {
    var re = /(?:url\(\s*["']?|@import\s+["'])([^"')\s]+)/gi;
    for (var m; (m = re.exec(css || "")); ) if (isNetwork(m[1])) addNetwork(m[1], how);
  }

  function finish() {
    var res;
    try {
      references();
      network.forEach(function (how, url) {
        addError("network fetch of " + url + " (" + how + "): the page must fetch nothing");
      });
      res = {
        errors: errors,
        layout: layoutProblems(),
        missing: missing(),
        height: Math.max(document.documentElement.scrollHeight, document.body ? document.body.scrollHeight : 0),
      };
    } catch (e) {
      res = { fatal: fmt(e) };
    }
    var pre = document.createElement("pre");
    pre.id = RESULT_ID;
    pre.textContent = JSON.stringify(res);
    (document.body || document.documentElement).appendChild(pre);
  }

  window.addEventListener("load", function () {
    var fonts = document.fonts ? document.fonts.ready : Promise.resolve();
    fonts.then(function () {
      setTimeout(finish, 200);
    });
  });
})();

/* paretolens client-side helpers: no inline scripts (the CSP forbids them). */
(function () {
  // Browser back/forward: the address is the state, so re-render the page from it.
  window.addEventListener("popstate", function () { window.location.reload(); });

  function plotOf(graphId) {
    var el = document.getElementById(graphId);
    return el && el.querySelector(".js-plotly-plot");
  }

  // Run page: once the main chart has drawn, ask for the second chart (TABLES_READY); the tables
  // are asked for when they come near the screen (TABLES_VISIBLE), with the grid library run
  // then: building grids nobody looks at would keep the page busy. See dashboard/pages/run.py.
  function whenPlotted(graphId, done) {
    var tries = 0;
    (function poll() {
      var gd = plotOf(graphId);
      if ((gd && gd._fullLayout) || tries++ > 600) { window.requestAnimationFrame(function () { setTimeout(done, 0); }); return; }
      setTimeout(poll, 20);
    })();
  }
  // `done` once the element `id` is within NEAR_PX of the screen; at once without it or without
  // IntersectionObserver, or when the address names a table tab (`tab=`: a link to a table).
  var NEAR_PX = 200;
  function whenNear(id, done) {
    var el = document.getElementById(id);
    var asked = new window.URLSearchParams(window.location.search).has("tab");
    if (!el || asked || !window.IntersectionObserver) { done(); return; }
    var seen = new window.IntersectionObserver(function (entries) {
      if (entries.some(function (e) { return e.isIntersecting; })) { seen.disconnect(); done(); }
    }, { rootMargin: NEAR_PX + "px 0px" });
    seen.observe(el);
  }
  // Scripts the page only preloaded (the grid library on the run page) run now, off the
  // critical path of the first chart.
  function runLazyScripts(done) {
    var links = document.querySelectorAll("link[data-lazy-script]");
    var pending = links.length;
    if (!pending) { done(); return; }
    links.forEach(function (link) {
      link.removeAttribute("data-lazy-script");
      var s = document.createElement("script");
      s.src = link.href;
      s.onload = s.onerror = function () { if (--pending === 0) { done(); } };
      document.head.appendChild(s);
    });
  }
  // The static charts in the page HTML (dashboard/prerender/page_html.py) go once plotly has
  // drawn the interactive ones at the same place, or once the page turns out to have no chart.
  // A point pinned on the static chart (dashboard/prerender/hover.js) is pinned on the live page,
  // and the click or key that woke the page (dashboard/assets/boot.js) is replayed on the live
  // element now at its place: the first input is not lost.
  function dropStatic() {
    var el = document.getElementById("static-page");
    if (el) { el.parentNode.removeChild(el); }
    var pin = window.paretolensStaticPin;
    window.paretolensStaticPin = null;
    if (pin && window.dash_clientside && window.dash_clientside.set_props) {
      window.dash_clientside.set_props({ type: "control", field: "point" }, { value: pin });
    }
    var wake = window.paretolensWake;
    window.paretolensWake = null;
    if (wake) { window.requestAnimationFrame(function () { replay(wake); }); }
  }
  var CLICK_INIT = { bubbles: true, cancelable: true, composed: true, button: 0 };
  function replay(wake) {
    if (wake.click) {
      var el = document.elementFromPoint(wake.x, wake.y);
      if (!el) { return; }
      var at = Object.assign({ view: window, clientX: wake.x, clientY: wake.y }, CLICK_INIT);
      var ptr = { pointerId: 1, pointerType: "mouse", isPrimary: true };
      el.dispatchEvent(new window.PointerEvent("pointerdown", Object.assign({ buttons: 1 }, ptr, at)));
      el.dispatchEvent(new MouseEvent("mousedown", Object.assign({ buttons: 1 }, at)));
      el.dispatchEvent(new window.PointerEvent("pointerup", Object.assign({ buttons: 0 }, ptr, at)));
      el.dispatchEvent(new MouseEvent("mouseup", Object.assign({ buttons: 0 }, at)));
      el.dispatchEvent(new MouseEvent("click", Object.assign({ buttons: 0 }, at)));
    } else if (wake.key) {
      // A key pressed on the static chart goes to the live one; Tab moves on from there.
      var chart = document.querySelector("#main-chart .js-plotly-plot");
      if (wake.chart && chart) { chart.setAttribute("tabindex", "-1"); chart.focus(); }
      var target = document.activeElement || document.body;
      if (wake.key === "Tab") {
        var stops = tabStops();
        var next = stops.filter(function (s) {
          return target === document.body || target.compareDocumentPosition(s) & Node.DOCUMENT_POSITION_FOLLOWING;
        });
        var to = wake.shiftKey ? stops[stops.length - 1] : next[0];
        if (to) { to.focus(); }
        return;
      }
      var keys = { key: wake.key, code: wake.code, shiftKey: wake.shiftKey, ctrlKey: wake.ctrlKey,
                   altKey: wake.altKey, metaKey: wake.metaKey, bubbles: true, cancelable: true };
      target.dispatchEvent(new KeyboardEvent("keydown", keys));
      target.dispatchEvent(new KeyboardEvent("keyup", keys));
    }
  }
  (function waitForChart(n) {
    var ready = document.getElementById("main-chart") && window.dash_clientside && window.dash_clientside.set_props;
    if (ready) {
      whenPlotted("main-chart", function () {
        if (document.getElementById("second-chart")) {
          whenPlotted("second-chart", taken);
        } else {
          taken();
        }
      });
    } else if (n > 50 && document.querySelector("#page > *")) {
      dropStatic();
      runLazyScripts(function () {});  // a page without the chart (e.g. a run not in the store)
    } else if (n < 1500) {
      setTimeout(function () { waitForChart(n + 1); }, 20);
    } else {
      dropStatic();
    }
    function taken() {
      dropStatic();
      window.dash_clientside.set_props("tables-ready", { data: Date.now() });
      whenNear("tables", function () {
        runLazyScripts(function () { window.dash_clientside.set_props("tables-visible", { data: Date.now() }); });
      });
    }
  })(0);

  function imageName(gd, graphId) {
    var title = gd.layout && gd.layout.title;
    var text = title && typeof title === "object" ? title.text : title;
    var tmp = document.createElement("textarea");
    tmp.innerHTML = String(text || graphId);  // the title is HTML-escaped text
    var stem = tmp.value.replace(/[^A-Za-z0-9._-]+/g, "_").replace(/^_+|_+$/g, "").slice(0, 150);
    return "paretolens_" + (stem || graphId);
  }

  // A downloaded image carries what the figure's layout.meta.export_notes says (the cost and
  // energy figures its axes use, and the attribution line), printed under the plot.
  function exportLines(gd) {
    var meta = gd.layout && gd.layout.meta, lines = [];
    var notes = ((meta && meta.export_notes) || []).slice();
    // the attribution (the server's text: the tool and the runs) with the page's address and date
    notes.push(((meta && meta.attribution) || "Made with paretolens") + " \u00b7 " +
      window.location.href + " \u00b7 " + new Date().toISOString().slice(0, 10));
    notes.forEach(function (note) {
      var cur = "";
      String(note).split(" ").forEach(function (w) {
        if (cur && (cur + " " + w).length > 170) { lines.push(cur); cur = w; } else { cur = cur ? cur + " " + w : w; }
      });
      if (cur) { lines.push(cur); }
    });
    return lines.map(function (l) { return l.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;"); });
  }
  function exported(gd) {
    var lines = exportLines(gd);
    if (!lines.length) { return gd; }
    var layout = Object.assign({}, gd.layout);
    var margin = Object.assign({}, layout.margin || {});
    margin.b = (margin.b || 80) + 16 * lines.length;
    layout.margin = margin;
    layout.annotations = (layout.annotations || []).concat(lines.map(function (text, i) {
      return { text: text, xref: "paper", yref: "paper", x: 0, xanchor: "left", y: 0, yanchor: "top",
               yshift: -56 - 16 * i, showarrow: false, align: "left", font: { size: 10, color: "#444" } };
    }));
    return { data: gd.data, layout: layout };
  }

  window.dash_clientside = Object.assign({}, window.dash_clientside, {
    paretolens: {
      copyLink: function () { return window.location.href; },
      // The image carries the chart's title (axes, run ids, models: dashboard/pages/run.py
      // chart_title), and its file is named after it.
      download: function (n, graphId, label) {
        var gd = plotOf(graphId);
        var format = String(label || "png").toLowerCase();
        if (n && gd && window.Plotly) {
          window.Plotly.downloadImage(exported(gd), { format: format, filename: imageName(gd, graphId), width: 1400, height: 720 + 16 * exportLines(gd).length, scale: format === "png" ? 2 : 1 });
        }
        return window.dash_clientside.no_update;
      },
      reload: function (state) {
        if (state === "done") { window.location.reload(); }
        return window.dash_clientside.no_update;
      }
    }
  });

  // Dash's dropdown keeps a focus trampoline (an aria-hidden, read-only input) in the tab
  // order and its own trigger button out of it (tabindex -1): screen readers land on an element
  // they are told does not exist. The trigger takes the trampoline's place in the tab order, so
  // Tab reaches every dropdown once, on the element that opens it.
  // Dash's checklists and radio items wrap each native input in a role="option" label inside
  // a role="listbox": an interactive control nested in another. The native inputs already say
  // what they are, so the ARIA roles go.
  function untrap(root) {
    var els = (root.querySelectorAll ? root : document).querySelectorAll(".dash-dropdown-focus-target");
    for (var i = 0; i < els.length; i++) {
      if (els[i].getAttribute("tabindex") !== "-1") { els[i].setAttribute("tabindex", "-1"); }
      var trigger = els[i].nextElementSibling;
      if (trigger && trigger.classList.contains("dash-dropdown") && !trigger.disabled && trigger.getAttribute("tabindex") !== "0") {
        trigger.setAttribute("tabindex", "0");
      }
    }
    // dcc.Tabs draws its tabs as plain divs: give them the tab role, the selected state and a
    // place in the tab order (Enter or Space opens one, below).
    var tabs = document.querySelectorAll(".tab-container .tab, .tabs .tab");
    for (var k = 0; k < tabs.length; k++) {
      var t = tabs[k];
      var sel = t.classList.contains("tab--selected") ? "true" : "false";
      if (t.getAttribute("role") !== "tab") { t.setAttribute("role", "tab"); }
      if (t.getAttribute("aria-selected") !== sel) { t.setAttribute("aria-selected", sel); }
      if (!t.hasAttribute("tabindex")) { t.setAttribute("tabindex", "0"); }
      var bar = t.parentElement;
      if (bar && bar.getAttribute("role") !== "tablist") { bar.setAttribute("role", "tablist"); }
    }
    // dcc.Clipboard is a bare icon: a button to the keyboard and to screen readers.
    var clips = document.querySelectorAll(".clip");
    for (var c = 0; c < clips.length; c++) {
      if (clips[c].getAttribute("role") !== "button") { clips[c].setAttribute("role", "button"); }
      if (!clips[c].hasAttribute("tabindex")) { clips[c].setAttribute("tabindex", "0"); }
      if (!clips[c].hasAttribute("aria-label") && clips[c].title) { clips[c].setAttribute("aria-label", clips[c].title); }
    }
    var opts = document.querySelectorAll('[role="option"]');
    for (var j = 0; j < opts.length; j++) {
      // (a dropdown's menu is a real listbox: left as it is)
      if (opts[j].querySelector("input") && !opts[j].closest(".dash-dropdown-content")) {
        var list = opts[j].closest('[role="listbox"]');
        ["role", "aria-selected", "aria-checked", "aria-posinset", "aria-setsize"].forEach(function (a) { opts[j].removeAttribute(a); });
        if (list) {
          ["role", "aria-multiselectable", "aria-orientation", "aria-activedescendant"].forEach(function (a) { list.removeAttribute(a); });
        }
      }
    }
  }
  // Chart legends: each entry is a switch in the tab order (Enter or Space shows or hides the
  // arm, as a click does; the restyle reaches Dash as restyleData and writes hide=).
  function legendItems(root) {
    var items = (root || document).querySelectorAll(".js-plotly-plot .legend .traces");
    for (var i = 0; i < items.length; i++) {
      var it = items[i];
      var d = it.__data__ && it.__data__[0] && it.__data__[0].trace;
      if (!d) { continue; }
      var on = d.visible === true || d.visible === undefined ? "true" : "false";
      if (it.getAttribute("tabindex") !== "0") { it.setAttribute("tabindex", "0"); }
      if (it.getAttribute("role") !== "switch") { it.setAttribute("role", "switch"); }
      if (it.getAttribute("aria-checked") !== on) { it.setAttribute("aria-checked", on); }
      var name = "show " + (it.textContent || d.name || "series");
      if (it.getAttribute("aria-label") !== name) { it.setAttribute("aria-label", name); }
    }
  }
  function toggleLegend(item) {
    var gd = item.closest(".js-plotly-plot");
    var d = item.__data__ && item.__data__[0] && item.__data__[0].trace;
    if (!gd || !d || !window.Plotly) { return; }
    var group = d.legendgroup, hide = d.visible === true || d.visible === undefined;
    var idx = [];
    for (var i = 0; i < gd.data.length; i++) {
      var t = gd.data[i];
      if (i === d.index || (group && t.legendgroup === group)) { idx.push(i); }
    }
    window.Plotly.restyle(gd, { visible: hide ? "legendonly" : true }, idx);
  }

  document.addEventListener("keydown", function (e) {
    var t = e.target;
    var role = t && t.getAttribute ? t.getAttribute("role") : null;
    var clip = role === "button" && t.classList.contains("clip");
    var enter = e.key === "Enter" || e.key === " ";
    if ((role === "tab" || clip) && enter) {
      e.preventDefault();
      t.click();
    } else if (role === "switch" && t.classList.contains("traces") && enter) {
      e.preventDefault();
      toggleLegend(t);
    } else if (enter && t.closest && t.closest("#points-grid") && t.classList.contains("ag-cell")) {
      // A points-grid row pins its point from the keyboard too (the grid's cellClicked).
      e.preventDefault();
      t.click();
    }
  });
  // A grid is one stop in the tab order (the arrow keys move inside it, as the ARIA grid pattern
  // has it): Tab leaves it for the next control rather than walking every header and cell, and
  // Shift+Tab for the one before it.
  var FOCUSABLE = 'a[href], button, input, select, textarea, summary, [tabindex]';
  function tabStops() {
    return Array.prototype.filter.call(document.querySelectorAll(FOCUSABLE), function (el) {
      if (el.disabled || el.tabIndex < 0 || el.closest("[aria-hidden=true]")) { return false; }
      var r = el.getBoundingClientRect();
      return r.width > 0 && r.height > 0 && getComputedStyle(el).visibility !== "hidden";
    });
  }
  document.addEventListener("keydown", function (e) {
    var grid = e.key === "Tab" && e.target.closest ? e.target.closest(".ag-root-wrapper") : null;
    if (!grid || e.target.closest(".ag-popup, .ag-menu, .ag-filter")) { return; }
    var stops = tabStops(), next = null;
    for (var i = 0; i < stops.length; i++) {
      if (grid.contains(stops[i])) { continue; }
      var after = grid.compareDocumentPosition(stops[i]) & Node.DOCUMENT_POSITION_FOLLOWING;
      if (e.shiftKey && !after) { next = stops[i]; }
      if (!e.shiftKey && after) { next = stops[i]; break; }
    }
    e.preventDefault();
    e.stopPropagation();
    if (next) { next.focus(); } else { document.activeElement.blur(); }
  }, true);
  // Once a frame at most: a chart's draw or a layout commit changes the page in many batches,
  // and each pass walks the whole page.
  var fixPending = false;
  function fixSoon() {
    if (fixPending) { return; }
    fixPending = true;
    window.requestAnimationFrame(function () { fixPending = false; untrap(document); legendItems(document); });
  }
  if (window.MutationObserver) {
    new MutationObserver(fixSoon).observe(document.documentElement, {
      childList: true, subtree: true, attributes: true, attributeFilter: ["tabindex", "role", "aria-selected", "aria-checked", "class"]
    });
  }

  // Grid cell renderers: links are React elements (text children, never HTML strings).
  var dagfuncs = (window.dashAgGridComponentFunctions = window.dashAgGridComponentFunctions || {});
  dagfuncs.Link = function (props) {
    var field = (props.colDef.cellRendererParams || {}).hrefField;
    var href = props.data && field ? props.data[field] : null;
    if (!href || href.charAt(0) !== "/") { return props.value == null ? "" : String(props.value); }
    return React.createElement("a", { href: href }, props.value == null ? "" : String(props.value));
  };
})();

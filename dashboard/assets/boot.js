/* A run page whose HTML carries its charts (dashboard/prerender/page_html.py) runs Dash's scripts
   only when the user first shows an intent the static charts cannot answer: their tags carry a
   type the browser ignores (page_html.AFTER_PAINT). Hover, click-to-pin and the arrow keys on a
   static chart's plot are answered by hover.js and load nothing; a press, a key, a wheel, a
   touch or a focus anywhere else, a drag on a plot (a zoom), the pointer leaving a plot toward
   the controls (left or up) or reaching one, or a scroll (the tables are below) wakes the page: this runs the scripts
   in their order, then starts Dash's renderer, as Dash's own `new DashRenderer()` tag would
   have. After the first frame their bytes are preloaded (fetched, not run), so a wake waits for
   no download. A page linking to a table (`tab=` in its address), or without a static chart,
   starts in the task after its first frame, as before.
   The click or key that woke the page is kept in window.paretolensWake ({x, y, click} or
   {key, ...}); paretolens.js replays it on the live element at the same place once the live
   page has replaced the static one. Not loaded by Dash itself (assets_ignore). */
(function () {
  var started = false;
  function tags() { return document.querySelectorAll('script[type="paretolens/after-paint"]'); }
  function start() {
    if (started) { return; }
    started = true;
    var last = null;
    tags().forEach(function (tag) {
      var s = document.createElement("script");
      s.src = tag.src;
      s.async = false;  // dynamically added scripts run in the order they were added
      document.body.appendChild(s);
      last = s;
    });
    function render() { window.renderer = new window.DashRenderer(); }
    if (last) { last.onload = last.onerror = render; } else { render(); }
  }
  function afterPaint(fn) {
    if (document.visibilityState === "hidden") { fn(); return; }  // no frame in a hidden tab
    window.requestAnimationFrame(function () { setTimeout(fn, 0); });
  }
  var overlay = document.getElementById("static-page");
  var linked = new window.URLSearchParams(window.location.search).has("tab");
  if (!overlay || linked) {
    afterPaint(start);
    if (document.visibilityState !== "hidden") { document.addEventListener("visibilitychange", start); }
    return;
  }

  afterPaint(function () {
    tags().forEach(function (tag) {
      var link = document.createElement("link");
      link.rel = "preload";
      link.as = "script";
      link.href = tag.src;
      document.head.appendChild(link);
    });
  });
  var DRAG_PX = 4;  // a press on a plot that moves further is a zoom, not a click
  var CONTROLS = ".sk-dropdown, .sk-checks, input, a, button, .sc-legend, .chart-tools";
  var KEPT_KEYS = { ArrowLeft: 1, ArrowRight: 1, Enter: 1, Escape: 1 };  // hover.js's keys
  var press = null, was = null;
  // The filter panel is left of the charts and the axis controls above them: a pointer leaving
  // a plot across its left or top edge is on its way to them (one leaving it to the right or
  // below goes to the legend, caught by overControl, or to the chart below).
  function leftToControls(ev) {
    return !!was && (ev.clientX < was.left || ev.clientY < was.top);
  }
  // Dash renders under the overlay before it goes: a press or key that reached a live element
  // was taken by the live page and is not replayed.
  function live(target) {
    var root = target && target.closest ? target.closest("#react-entry-point") : null;
    return !!root && root !== target;
  }
  function plotAt(target) { return target && target.closest ? target.closest("#static-page .sc-plot") : null; }
  var NEAR_PX = 12;  // a pointer this close to a control is on its way to it
  function overControl(x, y) {
    var els = overlay.querySelectorAll(CONTROLS);
    for (var i = 0; i < els.length; i++) {
      var r = els[i].getBoundingClientRect();
      if (r.width > 0 && x >= r.left - NEAR_PX && x <= r.right + NEAR_PX &&
          y >= r.top - NEAR_PX && y <= r.bottom + NEAR_PX) { return true; }
    }
    return false;
  }
  var EVENTS = ["pointerdown", "pointermove", "pointerup", "click", "keydown", "wheel",
                "touchstart", "focusin", "mousemove", "scroll"];
  // A press or key until the live page has taken over is kept (the latest one): the pointer
  // reaching a control wakes the page, and the click that follows is the one to replay.
  function wake(record) {
    if (record !== null || !started) { window.paretolensWake = record || null; }
    start();
  }
  function on(ev) {
    if (!overlay.isConnected) { return; }
    var t = ev.type, plot = plotAt(ev.target);
    if (t === "pointerdown") {
      if (plot) { press = { x: ev.clientX, y: ev.clientY }; return; }  // a pin, or a drag
      wake(live(ev.target) ? false : { x: ev.clientX, y: ev.clientY, click: false });
    } else if (t === "pointermove" || t === "mousemove") {
      if (press && ev.buttons && Math.abs(ev.clientX - press.x) + Math.abs(ev.clientY - press.y) > DRAG_PX) {
        wake(null);  // a zoom drag on the chart
      } else if (!started && !plot && (leftToControls(ev) || overControl(ev.clientX, ev.clientY))) {
        wake(null);  // the pointer left the plot for the controls, or reached one
      }
      was = plot ? plot.getBoundingClientRect() : null;
    } else if (t === "pointerup") {
      press = null;
    } else if (t === "keydown") {
      var chart = document.activeElement && document.activeElement.closest &&
        document.activeElement.closest("#static-page .static-chart");
      if (chart && KEPT_KEYS[ev.key]) { return; }
      wake(live(document.activeElement) ? false : { key: ev.key, code: ev.code, shiftKey: ev.shiftKey, ctrlKey: ev.ctrlKey,
             altKey: ev.altKey, metaKey: ev.metaKey, chart: !!chart });
    } else if (started) {
      return;
    } else if (t === "touchstart" || t === "focusin") {
      if (ev.target && ev.target.closest && ev.target.closest("#static-page .static-chart")) { return; }
      wake(null);
    } else if (t === "wheel" || t === "scroll") {
      wake(null);
    }
  }
  // The click completing the press kept above is the one to replay, unless the live page took it.
  window.addEventListener("click", function (ev) {
    var w = window.paretolensWake;
    if (w && w.x !== undefined && !w.click && Math.abs(ev.clientX - w.x) + Math.abs(ev.clientY - w.y) <= DRAG_PX) {
      if (live(ev.target)) { window.paretolensWake = null; } else { w.click = true; }
    }
  }, true);
  EVENTS.forEach(function (name) {
    if (name !== "click") { window.addEventListener(name, on, { capture: true, passive: true }); }
  });
})();

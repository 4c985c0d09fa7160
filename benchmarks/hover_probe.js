// Injected before any page script, next to probe.js (benchmarks/suite_interactive.py). Records,
// in performance.now() milliseconds since navigation start, the frame in which a chart first
// answered a hover with its values:
//   hover: the frame after a label appeared; hoverKind: "static" (the static chart of the page
//     HTML, dashboard/prerender/hover.js) or "plotly" (plotly's hover label, SVG or WebGL);
//   hoverText: the label's text (the benchmark checks that it names the point's values).
// On every animation frame until then it moves a synthetic mouse onto the first point it can
// find: a static point carrying hover text, else the first marker of a drawn plotly chart (its
// pixel position from the chart's axes, so WebGL charts count too), else the first point of the
// InferenceX app's D3 chart in the window (a `.dot-group`; kind "d3", label its
// `[data-chart-tooltip]`),
// dispatching `mousemove` on whatever element is under that spot, as a real pointer would. D3
// listens for `mouseenter`, which a real pointer fires on every element it enters: for a "d3"
// target the probe dispatches `mouseover` and `mouseenter` on the element and its ancestors first.
(function () {
  var H = (window.__plh = { hover: null, hoverKind: null, hoverText: null, tries: 0, frames: [] });
  // Long animation frames with the scripts that ran in them (file, invoker, ms): where the time
  // of the tasks left after the first hover went (the findings' profile).
  try {
    new PerformanceObserver(function (list) {
      list.getEntries().forEach(function (e) {
        H.frames.push([e.startTime, e.duration, (e.scripts || []).map(function (s) {
          return [String(s.sourceURL || "").split("/").pop().split("?")[0], String(s.invoker || "").slice(0, 60), s.duration];
        })]);
      });
    }).observe({ type: "long-animation-frame", buffered: true });
  } catch (e) { /* no attribution in this browser */ }
  function now() { return performance.now(); }
  function staticTarget() {
    var p = document.querySelector("#static-page .static-chart .point[data-h]");
    if (!p) { return null; }
    var r = p.getBoundingClientRect();
    return r.width || r.height ? { kind: "static", x: r.left + r.width / 2, y: r.top + r.height / 2 } : null;
  }
  function plotlyTarget() {
    var plots = document.querySelectorAll(".js-plotly-plot");
    for (var k = 0; k < plots.length; k++) {
      var gd = plots[k], fl = gd._fullLayout, fd = gd._fullData || [];
      if (!fl || !fl.xaxis || !fl.xaxis._length) { continue; }
      for (var i = 0; i < fd.length; i++) {
        var t = fd[i];
        if (t.visible !== true || !t.x || (t.mode || "").indexOf("markers") < 0 || t.hoverinfo === "skip") { continue; }
        for (var j = 0; j < t.x.length; j++) {
          var px = fl.xaxis.d2p(t.x[j]), py = fl.yaxis.d2p(t.y[j]);
          if (isFinite(px) && isFinite(py) && px >= 0 && py >= 0 && px <= fl.xaxis._length && py <= fl.yaxis._length) {
            var box = gd.getBoundingClientRect();
            return { kind: "plotly", x: box.left + fl.xaxis._offset + px, y: box.top + fl.yaxis._offset + py };
          }
        }
      }
    }
    return null;
  }
  function d3Target() {
    var dots = document.getElementsByClassName("dot-group");
    for (var k = 0; k < dots.length; k++) {
      var shape = dots[k].querySelector(".visible-shape") || dots[k];
      var r = shape.getBoundingClientRect();
      if (r.width && r.height && r.top >= 0 && r.left >= 0 && r.bottom <= window.innerHeight) {
        return { kind: "d3", x: r.left + r.width / 2, y: r.top + r.height / 2 };
      }
    }
    return null;
  }
  function enter(el, x, y) {
    var opts = { clientX: x, clientY: y, cancelable: true, view: window };
    el.dispatchEvent(new MouseEvent("mouseover", Object.assign({ bubbles: true }, opts)));
    var chain = [];
    for (var e = el; e; e = e.parentElement) { chain.unshift(e); }
    chain.forEach(function (e) { e.dispatchEvent(new MouseEvent("mouseenter", Object.assign({ bubbles: false }, opts))); });
  }
  function label(kind) {
    if (kind === "d3") {
      var tips = document.querySelectorAll("[data-chart-tooltip]");
      for (var i = 0; i < tips.length; i++) {
        if (tips[i].style.display === "block" && tips[i].textContent) { return tips[i].textContent; }
      }
      return null;
    }
    if (kind === "static") {
      var tip = document.querySelector("#static-page .sc-tip");
      return tip && tip.style.display !== "none" && tip.textContent ? tip.textContent : null;
    }
    var txt = document.querySelector(".js-plotly-plot .hoverlayer .hovertext");
    return txt ? txt.textContent : null;
  }
  var pending = null;
  function tick() {
    if (H.hover !== null) { return; }
    if (pending) {
      var text = label(pending);
      if (text) { H.hover = now(); H.hoverKind = pending; H.hoverText = text; return; }
    }
    var t = staticTarget() || plotlyTarget() || d3Target();
    if (t && t.y < window.innerHeight) {
      var el = document.elementFromPoint(t.x, t.y);
      if (el) {
        H.tries++;
        pending = t.kind;
        if (t.kind === "d3") { enter(el, t.x, t.y); }
        el.dispatchEvent(new MouseEvent("mousemove", { clientX: t.x, clientY: t.y, bubbles: true, cancelable: true, view: window }));
        // a label shown now is painted in the next frame, where it is recorded
        var shown = label(t.kind);
        if (shown) { requestAnimationFrame(function () { if (H.hover === null) { H.hover = now(); H.hoverKind = t.kind; H.hoverText = shown; } }); return; }
      }
    }
    requestAnimationFrame(tick);
  }
  requestAnimationFrame(tick);
})();

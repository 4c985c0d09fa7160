// Injected, after probe.js and hover_probe.js, into the InferenceX app's page only
// (benchmarks/suite_interactive.py). The app draws its charts with D3, one `.dot-group` per
// point, and no plotly: this records, in performance.now() milliseconds since navigation start,
// the frame in which the first `.dot-group` appeared (probe.js's firstPoint, kind "d3 svg") and
// the count of `.dot-group`s with the frame of its last change (`__plx.dots`, `__plx.dotsAt`).
// It also dismisses the app's star modal (its localStorage key), as a returning visitor would
// have, so that no dialog covers the chart.
(function () {
  try { localStorage.setItem("inferencex-star-modal-dismissed", String(Date.now())); } catch (e) { /* no storage */ }
  var P = window.__pl, X = (window.__plx = { dots: 0, dotsAt: null });
  var dots = document.getElementsByClassName("dot-group");
  new MutationObserver(function () {
    var n = dots.length;
    if (n === X.dots) { return; }
    X.dots = n;
    requestAnimationFrame(function () { X.dotsAt = performance.now(); });
    if (n > 0 && P && P.firstPoint === null) {
      P.firstPoint = -1;
      requestAnimationFrame(function () { P.firstPoint = performance.now(); P.firstKind = "d3 svg"; });
    }
  }).observe(document, { childList: true, subtree: true });
})();

// Injected before any page script (CDP Page.addScriptToEvaluateOnNewDocument). Records, in
// performance.now() milliseconds since navigation start:
//   firstPoint: the frame in which the first chart point was drawn: an SVG point node appearing
//     in a plotly chart or in the static chart of the page HTML (dashboard/prerender/chart_svg.py), or a
//     Plotly.react/newPlot with points resolving (WebGL draws no nodes); firstKind says which;
//   firstStatic / firstPlotly: the same for the static chart only and for plotly only;
//   staticBoth: the frame in which the page HTML's static charts (the main chart and the one
//     below it) were both drawn with their points, when the page has two;
//   loaf: long animation frames (start, duration, time spent running scripts in them);
//   plots[chart]: every Plotly.react/newPlot of a chart: start, done (next frame after its
//     promise resolved), points drawn, whether a WebGL trace was among them, whether its y axis
//     is log (dcc.Graph draws a patched figure with Plotly.react too);
//   longTasks: main-thread tasks over 50 ms (start, duration).
(function () {
  var P = (window.__pl = { firstPoint: null, firstKind: null, firstStatic: null, firstPlotly: null,
                           staticBoth: null, plots: {}, longTasks: [], loaf: [], errors: [] });
  function now() { return performance.now(); }
  function painted(fn) { requestAnimationFrame(function () { fn(now()); }); }

  window.addEventListener("error", function (e) { P.errors.push(String(e.message || e)); });
  try {
    new PerformanceObserver(function (list) {
      list.getEntries().forEach(function (e) { P.longTasks.push([e.startTime, e.duration]); });
    }).observe({ type: "longtask", buffered: true });
  } catch (e) { P.errors.push("no longtask observer: " + e); }
  try {
    new PerformanceObserver(function (list) {
      list.getEntries().forEach(function (e) {
        var js = 0;
        (e.scripts || []).forEach(function (s) { js += s.duration; });
        P.loaf.push([e.startTime, e.duration, js]);
      });
    }).observe({ type: "long-animation-frame", buffered: true });
  } catch (e) { P.errors.push("no long-animation-frame observer: " + e); }

  function point(kind) {
    if (P.firstPoint === null) { P.firstPoint = -1; painted(function (t) { P.firstPoint = t; P.firstKind = kind; }); }
  }
  var seen = { "static svg": false, svg: false };
  new MutationObserver(function () {
    if (!seen.svg && document.querySelector(".js-plotly-plot .scatterlayer .point")) {
      seen.svg = true;
      point("svg");
      painted(function (t) { if (P.firstPlotly === null) { P.firstPlotly = t; } });
    }
    if (!seen["static svg"] && document.querySelector(".static-chart .scatterlayer .point")) {
      seen["static svg"] = true;
      point("static svg");
      painted(function (t) { P.firstStatic = t; });
    }
    if (P.staticBoth === null) {
      var charts = document.querySelectorAll("#static-page .static-chart");
      if (charts.length >= 2 && Array.prototype.every.call(charts, function (c) { return c.querySelector(".scatterlayer .point"); })) {
        P.staticBoth = -1;
        painted(function (t) { P.staticBoth = t; });
      }
    }
  }).observe(document, { childList: true, subtree: true });

  function chartOf(gd) {
    var el = typeof gd === "string" ? document.getElementById(gd) : gd;
    for (var e = el; e; e = e.parentElement) {
      if (e.id && /chart/.test(e.id)) { return [el, e.id]; }
    }
    return [el, el && el.id ? el.id : "?"];
  }
  function logY(el) {
    var ax = el && el._fullLayout && el._fullLayout.yaxis;
    return !!ax && ax.type === "log";
  }
  function pointsOf(el) {
    var n = 0, gl = false;
    ((el && el._fullData) || []).forEach(function (t) {
      if (t.visible !== true) { return; }
      if (t.type === "scattergl") { gl = true; }
      if (t.x && (t.mode || "").indexOf("markers") >= 0) { n += t.x.length; }
    });
    return [n, gl];
  }
  function wrap(pl) {
    ["react", "newPlot"].forEach(function (name) {
      var orig = pl && pl[name];
      if (!orig || orig.__pl) { return; }
      var wrapped = function (gd) {
        var start = now();
        var out = orig.apply(this, arguments);
        Promise.resolve(out).then(function () {
          var c = chartOf(gd), pg = pointsOf(c[0]);
          painted(function (t) {
            (P.plots[c[1]] = P.plots[c[1]] || []).push({ start: start, done: t, points: pg[0], gl: pg[1], logy: logY(c[0]) });
            if (pg[0] > 0) {
              if (P.firstPoint === null) { P.firstPoint = t; P.firstKind = name + (pg[1] ? " (webgl)" : ""); }
              if (P.firstPlotly === null) { P.firstPlotly = t; }
            }
          });
        });
        return out;
      };
      wrapped.__pl = true;
      pl[name] = wrapped;
    });
  }
  var current;
  Object.defineProperty(window, "Plotly", {
    configurable: true,
    get: function () { return current; },
    set: function (v) { current = v; wrap(v); },
  });
})();

/* Run page, issue 18 item 4: the work that follows the first chart, one main-thread task at a
   time. Each step waits for the next frame and yields once (requestAnimationFrame, then
   setTimeout 0), so the browser paints and handles input between the second chart's draw, a
   big grid's construction and its rows. Nothing is hidden: each step draws what the user sees,
   a frame after the one before it. */
(function () {
  function afterPaint(value) {
    return new Promise(function (resolve) {
      window.requestAnimationFrame(function () { setTimeout(function () { resolve(value); }, 0); });
    });
  }
  // WebGL canvases at the screen's own pixel ratio (plotly's default draws them at 2x, four times
  // the pixels on a 1x screen, all of them rasterised again on every redraw).
  var SECOND_CHART_ID = "second-chart";  // dashboard/ids.py Id.SECOND_CHART
  var calls = 0;
  function glRatio() {
    return Math.min(4, Math.max(1, Math.round(window.devicePixelRatio || 1)));
  }
  // Every chart's default (the main chart draws before any callback could set its config):
  // plotly, loaded before this file, takes it for each plot it draws from now on.
  if (window.Plotly && typeof window.Plotly.setPlotConfig === "function") {
    window.Plotly.setPlotConfig({ plotGlPixelRatio: glRatio() });
  }

  // Resolves once `test` holds (checked once a frame, up to 30 frames).
  function when(test, tries) {
    if (test() || (tries || 0) >= 30) { return Promise.resolve(null); }
    return afterPaint(null).then(function () { return when(test, (tries || 0) + 1); });
  }
  function plotOf(chartId) {
    var chart = document.getElementById(chartId);
    return chart && chart.querySelector(".js-plotly-plot");
  }
  function glCanvases(chartId) {
    var chart = document.getElementById(chartId);
    return chart ? chart.querySelectorAll("canvas.gl-canvas:not(.gl-canvas-pick)") : [];
  }
  // The WebGL contexts of a chart's canvases, one per task (on a software rasteriser each takes
  // tens of milliseconds), with the attributes plotly's regl asks for: its later request gets the
  // same context back. The pick canvas gets none (plotly uses it for parcoords only).
  var GL_ATTRIBUTES = { antialias: true, preserveDrawingBuffer: true, premultipliedAlpha: true };
  function makeContexts(chartId) {
    return when(function () { return glCanvases(chartId).length > 0; }).then(function () {
      return Array.prototype.reduce.call(glCanvases(chartId), function (done, canvas) {
        return done.then(function () {
          canvas.getContext("webgl", GL_ATTRIBUTES);
          return afterPaint(null);
        });
      }, Promise.resolve(null));
    });
  }
  // A transparent WebGL trace of two points at the corners of `fig`'s WebGL points (the
  // smallest and largest x and y; positive ones on a log axis), or of none if it has none:
  // drawing it sets plotly's WebGL up (its shaders) with the axes the points will get.
  function corners(fig) {
    var axes = fig.layout || {};
    var box = { x: [Infinity, -Infinity], y: [Infinity, -Infinity] };
    (fig.data || []).forEach(function (t) {
      if (t.type !== "scattergl" || t.visible === false || t.visible === "legendonly") { return; }
      ["x", "y"].forEach(function (k) {
        var axis = axes[k + "axis" + String((t[k + "axis"] || k).slice(1))] || {};
        var log = axis.type === "log";
        (t[k] || []).forEach(function (v) {
          if (typeof v !== "number" || !isFinite(v) || (log && v <= 0)) { return; }
          if (v < box[k][0]) { box[k][0] = v; }
          if (v > box[k][1]) { box[k][1] = v; }
        });
      });
    });
    var found = box.x[0] <= box.x[1] && box.y[0] <= box.y[1];
    return { type: "scattergl", mode: "markers", x: found ? box.x : [], y: found ? box.y : [],
             marker: { opacity: 0 }, hoverinfo: "skip", showlegend: false, name: "corners" };
  }
  // The second chart's first WebGL draw, one main-thread task per step, each a frame after the
  // one before: plotly adds its canvases (an empty WebGL trace), their contexts, plotly's WebGL
  // set-up (the corners trace), then the points. `current` says whether this draw is still the
  // latest one asked for.
  function firstGlDraw(chartId, fig, current) {
    var setUp = { data: [corners(fig)], layout: fig.layout };
    return makeContexts(chartId).then(function () {
      if (!current()) { return null; }
      window.dash_clientside.set_props(chartId, { figure: setUp });
      return when(function () {
        var gd = plotOf(chartId);
        return gd && gd._fullData && gd._fullData.length === 1 && gd._fullData[0].name === "corners";
      });
    }).then(function () { return afterPaint(null); }).then(function () {
      if (current()) { window.dash_clientside.set_props(chartId, { figure: fig }); }
    });
  }

  window.dash_clientside = Object.assign({}, window.dash_clientside, {
    paretolens_deferred: {
      // The second chart draws what SECOND_FIGURE holds (RunCallbacks.on_second: asked for once
      // the main chart has been drawn, TABLES_READY, then on every update), a frame after it
      // arrives, so that a main chart redraw arriving with it is painted first.
      secondChart: function (ready, fig, config) {
        var nu = window.dash_clientside.no_update;
        if (!ready || !fig) { return [nu, nu]; }
        ++calls;  // a newer figure wins over a first draw still on its way
        var ratio = glRatio();
        var full = Object.assign({}, fig);
        if (config && config.plotGlPixelRatio === ratio) { return afterPaint([full, nu]); }
        var cfg = Object.assign({}, config || {}, { plotGlPixelRatio: ratio });
        var gl = (fig.data || []).some(function (t) { return t.type === "scattergl"; });
        if (!gl) { return afterPaint([full, cfg]); }
        // First draw of a WebGL chart: an empty WebGL trace over the frame already shown, then
        // the rest a step per task (firstGlDraw).
        var empty = { data: [{ type: "scattergl", mode: "markers", x: [], y: [], hoverinfo: "skip", showlegend: false }], layout: fig.layout };
        var call = ++calls;
        return afterPaint([empty, cfg]).then(function (out) {
          firstGlDraw(SECOND_CHART_ID, full, function () { return call === calls; });
          return out;
        });
      },
      // Once the main chart is drawn, a WebGL second chart's figure is asked for (its page's
      // layout has no second tokens); an SVG one came with the layout, so nothing is asked.
      secondWanted: function (ready, tokens) {
        return ready && !tokens ? ready : window.dash_clientside.no_update;
      },
      // A big grid is built without rows (its loading overlay) in the task that renders the
      // tables; its rows follow once AG Grid is ready (its module loads on first use), a frame
      // later, in a task of their own.
      gridRows: function (rows, gridId) {
        if (!rows) { return window.dash_clientside.no_update; }
        var grids = window.dash_ag_grid;
        var ready = grids && grids.getApiAsync ? grids.getApiAsync(gridId) : Promise.resolve();
        return ready.then(function () { return afterPaint(rows); }, function () { return rows; });
      }
    }
  });
})();

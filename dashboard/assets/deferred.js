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

  window.dash_clientside = Object.assign({}, window.dash_clientside, {
    paretolens_deferred: {
      // The second chart draws what SECOND_FIGURE holds once the main chart has been drawn
      // (TABLES_READY) and then on every update, a frame after the main chart's redraw (both
      // arrive in one response; plotly would otherwise draw both before painting either).
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
        // First draw of a WebGL chart: its WebGL contexts are created (slow on a software
        // rasteriser) with an empty WebGL trace over the frame already shown, and the points are
        // drawn a frame later in their own task.
        var empty = { data: [{ type: "scattergl", mode: "markers", x: [], y: [], hoverinfo: "skip", showlegend: false }], layout: fig.layout };
        var call = ++calls;
        return afterPaint([empty, cfg]).then(function (out) {
          afterPaint(null).then(function () {
            if (call === calls) { window.dash_clientside.set_props(SECOND_CHART_ID, { figure: full }); }
          });
          return out;
        });
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

// The /embed page (dashboard/pages/embed.py): draw the figure of its JSON data block.
// Not loaded by Dash pages (assets_ignore in dashboard/app.py).
(function () {
  "use strict";
  var block = document.getElementById("figure");
  if (!block || !window.Plotly) { return; }
  var doc = JSON.parse(block.textContent);
  window.Plotly.newPlot("chart", doc.figure.data, doc.figure.layout, {
    responsive: true,
    displaylogo: false,
    modeBarButtonsToRemove: ["select2d", "lasso2d"],
  });
})();

/* Hover and click on the static charts (dashboard/prerender/chart_svg.py), before plotly has
   loaded: inlined in the page HTML (its hash is in the Content-Security-Policy), no download.
   Each point carries its hover text (data-h, plain text, one line per row) and its id (data-p);
   the nearest point within 20 px of the pointer (plotly's hoverdistance) shows the text in a
   label beside it, coloured like the point, as plotly's "closest" hover does. A click pins the
   point: its label stays, and the live page pins the same point once it has taken over
   (paretolens.js reads window.paretolensStaticPin). Keyboard: the chart takes focus, the arrow
   keys walk the points left to right, Enter pins, Escape unpins. Text is set with textContent
   only: nothing from the data is parsed as markup or run. */
(function () {
  var HOVER_PX = 20;
  var plot = null, pts = [], tip = null, pinned = null, shown = null, walk = -1;
  // Each static chart (the main one and the one below it) keeps its own points, label and pin.
  function collect(p) {
    if (plot === p) { return; }
    if (plot) {
      plot.__sc = { pts: pts, tip: tip, pinned: pinned, walk: walk };
      if (shown !== pinned) { show(pinned); }
    }
    plot = p; shown = null;
    if (p.__sc) { pts = p.__sc.pts; tip = p.__sc.tip; pinned = p.__sc.pinned; walk = p.__sc.walk; return; }
    pts = []; tip = null; pinned = null; walk = -1;
    var els = p.querySelectorAll(".point[data-h]");
    for (var i = 0; i < els.length; i++) {
      var el = els[i], use = el.tagName.toLowerCase() === "use";
      pts.push({
        el: el,
        fx: parseFloat(el.getAttribute(use ? "x" : "cx")) / 100,
        fy: parseFloat(el.getAttribute(use ? "y" : "cy")) / 100,
        r: use ? parseFloat(el.getAttribute("width")) / 2 : parseFloat(el.getAttribute("r"))
      });
    }
    pts.sort(function (a, b) { return a.fx - b.fx || a.fy - b.fy; });
  }
  function paint(el, name) {
    var v = el.getAttribute(name);
    return v !== null ? v : el.parentNode.getAttribute(name);
  }
  function show(pt) {
    shown = pt;
    if (!pt) { if (tip) { tip.style.display = "none"; } return; }
    if (!tip || tip.parentNode !== plot) {
      tip = document.createElement("div");
      tip.className = "sc-tip";
      tip.setAttribute("role", "tooltip");
      plot.appendChild(tip);
    }
    var fill = paint(pt.el, "fill");
    tip.style.backgroundColor = fill && fill !== "none" ? fill : paint(pt.el, "stroke") || "#444";
    tip.textContent = pt.el.getAttribute("data-h");
    tip.classList.toggle("sc-pinned", pt === pinned);
    tip.style.display = "block";
    var rgb = (getComputedStyle(tip).backgroundColor.match(/\d+(\.\d+)?/g) || [0, 0, 0]).map(Number);
    tip.style.color = 0.299 * rgb[0] + 0.587 * rgb[1] + 0.114 * rgb[2] > 150 ? "#222" : "#fff";
    var w = plot.clientWidth || plot.getBoundingClientRect().width;
    var h = plot.clientHeight || plot.getBoundingClientRect().height;
    var x = pt.fx * w, y = pt.fy * h, tw = tip.offsetWidth, th = tip.offsetHeight;
    var left = x + pt.r + 8 + tw > w ? x - pt.r - 8 - tw : x + pt.r + 8;
    tip.style.left = left + "px";
    tip.style.top = Math.max(-60, Math.min(h - th + 60, y - th / 2)) + "px";
  }
  function nearest(p, ev) {
    collect(p);
    var box = p.getBoundingClientRect(), mx = ev.clientX - box.left, my = ev.clientY - box.top;
    var best = null, bestD = Infinity;
    for (var i = 0; i < pts.length; i++) {
      var dx = pts[i].fx * box.width - mx, dy = pts[i].fy * box.height - my;
      var d = Math.sqrt(dx * dx + dy * dy) - pts[i].r;
      if (d < bestD) { bestD = d; best = pts[i]; }
    }
    return bestD <= HOVER_PX ? best : null;
  }
  function plotOf(target) {
    var chart = target && target.closest && target.closest("#static-page .static-chart");
    return chart && chart.querySelector(".sc-plot");
  }
  document.addEventListener("mousemove", function (ev) {
    var p = plotOf(ev.target);
    if (!p) { if (plot && shown && shown !== pinned) { show(pinned); } return; }
    var pt = nearest(p, ev);
    if (pt !== shown) { show(pt || pinned); }
  });
  document.addEventListener("click", function (ev) {
    var p = plotOf(ev.target);
    if (!p) { return; }
    var pt = nearest(p, ev);
    pinned = pt;
    window.paretolensStaticPin = pt ? pt.el.getAttribute("data-p") : null;
    show(pt);
  });
  document.addEventListener("focusin", function (ev) {
    var p = plotOf(ev.target);
    if (p) { collect(p); show(pinned || shown || pts[0] || null); walk = pts.indexOf(shown); }
  });
  document.addEventListener("keydown", function (ev) {
    var p = plotOf(document.activeElement);
    if (!p) { return; }
    collect(p);
    if (ev.key === "ArrowRight" || ev.key === "ArrowLeft") {
      walk = Math.max(0, Math.min(pts.length - 1, walk + (ev.key === "ArrowRight" ? 1 : -1)));
      show(pts[walk] || null);
      ev.preventDefault();
    } else if (ev.key === "Enter" && shown) {
      pinned = shown;
      window.paretolensStaticPin = shown.el.getAttribute("data-p");
      show(shown);
    } else if (ev.key === "Escape") {
      pinned = null;
      window.paretolensStaticPin = null;
      show(null);
    }
  });
})();

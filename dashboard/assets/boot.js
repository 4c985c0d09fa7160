/* A page whose HTML carries its first chart (dashboard/prerender/page_html.py) fetches and runs its
   scripts only once that chart has been painted: their tags carry a type the browser ignores
   (static_page.AFTER_PAINT). In the task after the first frame this runs them in their order,
   then starts Dash's renderer, as Dash's own `new DashRenderer()` tag would have. Not loaded by
   Dash itself (assets_ignore). */
(function () {
  var started = false;
  function start() {
    if (started) { return; }
    started = true;
    var tags = document.querySelectorAll('script[type="paretolens/after-paint"]');
    var last = null;
    tags.forEach(function (tag) {
      var s = document.createElement("script");
      s.src = tag.src;
      s.async = false;  // dynamically added scripts run in the order they were added
      document.body.appendChild(s);
      last = s;
    });
    function render() { window.renderer = new window.DashRenderer(); }
    if (last) { last.onload = last.onerror = render; } else { render(); }
  }
  if (document.visibilityState === "hidden") {
    start();  // no frame is painted in a hidden tab: nothing to wait for
  } else {
    window.requestAnimationFrame(function () { setTimeout(start, 0); });
    document.addEventListener("visibilitychange", start);
  }
})();

// The layout request names its page (dashboard/app.py `layout_url`): Dash's renderer asks for
// `_dash-layout` without saying which page it is on, so its request gets the page's path and
// query as `?page=`, encoded as the page's preload link has it (the preloaded answer is reused).
(function () {
  var fetch0 = window.fetch;
  window.fetch = function (url, opts) {
    if (typeof url === "string" && /_dash-layout$/.test(url)) {
      url += "?page=" + encodeURIComponent(window.location.pathname + window.location.search);
    }
    return fetch0.call(this, url, opts);
  };
})();

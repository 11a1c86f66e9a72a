// Details on hover: every mark of a chart carries an aria-label (written by Vega when the report was made);
// the tip shows it next to the pointer.  Nothing else runs, nothing is fetched.
(function () {
  "use strict";
  var tip = document.getElementById("tip");
  if (!tip) { return; }
  function mark(target) {
    var el = target;
    while (el && el !== document.body) {
      if (el.getAttribute && el.getAttribute("role") === "graphics-symbol" && el.getAttribute("aria-label")
          && el.closest && el.closest("figure.chart")) { return el; }
      el = el.parentNode;
    }
    return null;
  }
  document.addEventListener("mousemove", function (ev) {
    var el = mark(ev.target);
    if (!el || /^(X|Y)-axis|legend/i.test(el.getAttribute("aria-roledescription") || "")) {
      tip.style.display = "none";
      return;
    }
    tip.textContent = el.getAttribute("aria-label").replace(/^detail: /, "");
    tip.style.display = "block";
    var x = ev.clientX + 14, y = ev.clientY + 14, w = tip.offsetWidth, h = tip.offsetHeight;
    if (x + w > window.innerWidth - 8) { x = Math.max(8, ev.clientX - w - 14); }
    if (y + h > window.innerHeight - 8) { y = Math.max(8, ev.clientY - h - 14); }
    tip.style.left = x + "px";
    tip.style.top = y + "px";
  });
  document.addEventListener("mouseleave", function () { tip.style.display = "none"; });
})();

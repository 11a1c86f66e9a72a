// The lattice picture: one canvas, every node a dot placed by height (row) and lexicographic order (column).
// Evaluated nodes are coloured by verdict; the chosen node is ringed; hover shows a node's levels.
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("veil-data").textContent);
  var lat = data.lattice;
  var canvas = document.getElementById("lattice-canvas");
  if (!lat || !canvas || !canvas.getContext) { return; }
  var heights = lat.heights, d = heights.length;
  var status = {};
  lat.evaluated.forEach(function (e) { status[e[0].join(",")] = e[1]; });
  var levels = [];
  var total = 1;
  heights.forEach(function (h) { total *= h + 1; });
  for (var i = 0; i < total; i++) {
    var rest = i, node = new Array(d), sum = 0;
    for (var j = d - 1; j >= 0; j--) { node[j] = rest % (heights[j] + 1); rest = Math.floor(rest / (heights[j] + 1)); sum += node[j]; }
    (levels[sum] = levels[sum] || []).push(node);
  }
  var width = canvas.width, rowH = Math.max(14, Math.min(40, 520 / levels.length));
  canvas.height = Math.round(rowH * levels.length + 30);
  var ctx = canvas.getContext("2d");
  var points = [], index = {};
  levels.forEach(function (row, level) {
    var step = (width - 40) / row.length;
    row.forEach(function (node, k) {
      var p = { node: node, x: 20 + step * (k + 0.5), y: canvas.height - 15 - level * rowH, r: Math.max(1.5, Math.min(6, step / 2.5)) };
      index[node.join(",")] = p;
      points.push(p);
    });
  });
  ctx.fillStyle = "#ffffff";
  ctx.fillRect(0, 0, canvas.width, canvas.height);
  if (total <= 600) {
    ctx.strokeStyle = "#e3e7ee";
    ctx.lineWidth = 1;
    points.forEach(function (p) {
      for (var a = 0; a < d; a++) {
        if (p.node[a] < heights[a]) {
          var up = p.node.slice(); up[a] += 1;
          var q = index[up.join(",")];
          ctx.beginPath(); ctx.moveTo(p.x, p.y); ctx.lineTo(q.x, q.y); ctx.stroke();
        }
      }
    });
  }
  var colours = { "1": "#54a24b", "0": "#e45756" };
  points.forEach(function (p) {
    var s = status[p.node.join(",")];
    ctx.beginPath();
    ctx.arc(p.x, p.y, s === undefined ? Math.max(1, p.r * 0.6) : p.r, 0, 2 * Math.PI);
    ctx.fillStyle = s === undefined ? "#c7ccd6" : colours[String(s)];
    ctx.fill();
  });
  function ring(node, colour, label) {
    if (!node) { return; }
    var p = index[node.join(",")];
    if (!p) { return; }
    ctx.beginPath(); ctx.arc(p.x, p.y, p.r + 5, 0, 2 * Math.PI);
    ctx.strokeStyle = colour; ctx.lineWidth = 2.5; ctx.stroke();
    ctx.fillStyle = colour; ctx.font = "12px system-ui, sans-serif";
    ctx.fillText(label + " [" + node.join(",") + "]", Math.min(p.x + p.r + 8, width - 150), p.y - p.r - 6);
  }
  ring(lat.optimal && lat.chosen && lat.optimal.join(",") !== lat.chosen.join(",") ? lat.optimal : null, "#f58518", "optimal");
  ring(lat.chosen, "#1f4fd1", "chosen");
  var tip = document.getElementById("tip");
  canvas.addEventListener("mousemove", function (ev) {
    var box = canvas.getBoundingClientRect();
    var x = (ev.clientX - box.left) * canvas.width / box.width, y = (ev.clientY - box.top) * canvas.height / box.height;
    var best = null, dist = 64;
    points.forEach(function (p) { var dd = (p.x - x) * (p.x - x) + (p.y - y) * (p.y - y); if (dd < dist) { dist = dd; best = p; } });
    if (!best) { tip.style.display = "none"; return; }
    var s = status[best.node.join(",")];
    tip.textContent = "[" + best.node.join(",") + "] " + (s === undefined ? "not evaluated" : (s ? "passes" : "fails"));
    tip.style.left = (best.x + 10) + "px"; tip.style.top = (best.y - 10) + "px"; tip.style.display = "block";
  });
  canvas.addEventListener("mouseleave", function () { tip.style.display = "none"; });
  canvas.setAttribute("data-drawn", String(points.length));
})();

/* pi-dashboard: the little JavaScript the pages need. No build step, no framework.
 *
 * - Confirmation dialogs: a button with data-dialog-open="<dialog id>" opens it;
 *   [data-dialog-close] inside closes it; a dialog closes itself after its htmx form
 *   request finishes, so the live command status beneath stays in view.
 * - Fields for one choice only: data-show-when="<name>=<v1>|<v2>" hides the element
 *   unless the form's control <name> has one of those values.
 * - Copy buttons: a button with data-copy="<element id>" copies that element's text.
 * - Charts: <div class="chart" data-chart="<json script id>"> is drawn with uPlot from a
 *   <script type="application/json"> block {"x": [unix seconds], "series": [{"label", "values"}]}.
 */
(function () {
  "use strict";

  document.addEventListener("click", function (event) {
    var opener = event.target.closest("[data-dialog-open]");
    if (opener) {
      var dialog = document.getElementById(opener.getAttribute("data-dialog-open"));
      if (dialog && typeof dialog.showModal === "function") {
        event.preventDefault();
        dialog.showModal();
      }
      return;
    }
    var copier = event.target.closest("[data-copy]");
    if (copier) {
      var source = document.getElementById(copier.getAttribute("data-copy"));
      if (source && navigator.clipboard) {
        navigator.clipboard.writeText(source.textContent.trim()).then(function () {
          copier.textContent = "Copied";
        });
      }
      return;
    }
    var closer = event.target.closest("[data-dialog-close]");
    if (closer) {
      var owner = closer.closest("dialog");
      if (owner) {
        event.preventDefault();
        owner.close();
      }
    }
  });

  function applyShowWhen(root) {
    root.querySelectorAll("[data-show-when]").forEach(function (el) {
      var rule = el.getAttribute("data-show-when").split("=");
      var form = el.closest("form");
      var control = form && form.elements[rule[0]];
      if (!control) return;
      el.hidden = rule[1].split("|").indexOf(control.value) < 0;
    });
  }
  document.addEventListener("change", function (event) {
    var form = event.target.closest && event.target.closest("form");
    if (form) applyShowWhen(form);
  });
  document.addEventListener("DOMContentLoaded", function () { applyShowWhen(document); });

  document.addEventListener("htmx:afterRequest", function (event) {
    var dialog = event.target.closest && event.target.closest("dialog");
    if (dialog && dialog.open) dialog.close();
  });

  var PALETTE = ["#2f81f7", "#e5534b", "#3fb950", "#d29922", "#a371f7", "#39c5cf",
    "#f778ba", "#8b949e", "#db6d28", "#56d364"];

  function cssVar(name) {
    return getComputedStyle(document.documentElement).getPropertyValue(name).trim();
  }

  function drawChart(el) {
    if (el.dataset.drawn || typeof uPlot === "undefined") return;
    var source = document.getElementById(el.getAttribute("data-chart"));
    if (!source) return;
    var data = JSON.parse(source.textContent);
    el.dataset.drawn = "1";
    if (!data.x.length || !data.series.length) {
      el.innerHTML = '<p class="muted">No data in this time range.</p>';
      el.style.minHeight = "0";
      return;
    }
    var axisColour = cssVar("--text-muted");
    var gridColour = cssVar("--border");
    var series = [{}];
    var columns = [data.x];
    data.series.forEach(function (s, i) {
      var colour = PALETTE[i % PALETTE.length];
      series.push({ label: s.label, stroke: colour, fill: colour + "22", width: 2,
        points: { show: data.x.length < 60 } });
      columns.push(s.values);
    });
    var axis = { stroke: axisColour, grid: { stroke: gridColour, width: 1 },
      ticks: { stroke: gridColour } };
    var opts = {
      width: Math.max(el.clientWidth, 300),
      height: 240,
      series: series,
      axes: [axis, Object.assign({}, axis, { size: 50 })],
      scales: { y: { range: function (u, min, max) { return [0, Math.max(max, 1)]; } } },
      // The legend is written out beside the chart (labels, totals); uPlot's own
      // shows values only while hovering.
      legend: { show: false },
    };
    // Markers: pi's own events (dashed) and operators' actions (solid) on the x axis.
    var markers = data.markers || [];
    opts.hooks = { draw: [function (u) {
      var ctx = u.ctx;
      markers.forEach(function (m) {
        var x = u.valToPos(m.x, "x", true);
        if (x < u.bbox.left || x > u.bbox.left + u.bbox.width) return;
        ctx.save();
        ctx.strokeStyle = m.by === "operator" ? cssVar("--accent") || "#2f81f7" : axisColour;
        ctx.setLineDash(m.by === "operator" ? [] : [4, 3]);
        ctx.lineWidth = 1;
        ctx.beginPath();
        ctx.moveTo(x, u.bbox.top);
        ctx.lineTo(x, u.bbox.top + u.bbox.height);
        ctx.stroke();
        ctx.restore();
      });
    }] };
    var plot = new uPlot(opts, columns, el);
    // The written legend's swatches take the series' colours.
    var card = el.closest(".card");
    if (card) card.querySelectorAll(".chart-swatch").forEach(function (sw) {
      sw.style.background = PALETTE[Number(sw.dataset.series) % PALETTE.length];
    });
    new ResizeObserver(function () {
      plot.setSize({ width: Math.max(el.clientWidth, 300), height: 240 });
    }).observe(el);
  }

  function drawAll(root) {
    (root || document).querySelectorAll(".chart[data-chart]").forEach(drawChart);
  }

  document.addEventListener("DOMContentLoaded", function () { drawAll(document); });
  document.addEventListener("htmx:afterSettle", function (event) { drawAll(event.target); });
})();

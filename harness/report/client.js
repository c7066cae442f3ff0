// Runs inside the report (inlined, no modules, no network): draws the
// distribution and bulk-transfer charts from the embedded data with the
// inlined Chart.js and fills the raw-record drill-downs on demand. Every
// string reaches the page through textContent or Chart.js's canvas text,
// never as HTML.
/* global Chart */
(function () {
  'use strict';
  var data = JSON.parse(document.getElementById('report-data').textContent);
  // Bulk protocols take the colour of their page-load kin (TCP as HTTP/1.1, QUIC as HTTP/3).
  var COLORS = {
    h1: '#1f6fb4',
    h1s: '#0f9aa8',
    h2: '#2b9a3a',
    h3: '#c8322b',
    tcp: '#1f6fb4',
    quic: '#c8322b',
    'browser-h1': '#0f9aa8',
    'browser-h2': '#2b9a3a',
    'browser-h3': '#b8860b',
  };
  var EXTRA = ['#7b4bb7', '#b8860b', '#555555', '#d45fa7', '#3f5fbf'];
  // A variant takes its plain protocol's colour and a line and point of its own.
  var VARIANTS = {
    pep: { dash: [6, 4], point: 'triangle' },
    qpep: { dash: [2, 3], point: 'rect' },
    vpn: { dash: [8, 3, 2, 3], point: 'crossRot' },
  };
  var charts = [];

  function variantOf(protocol) {
    var m = /-(pep|qpep|vpn)$/.exec(String(protocol));
    return m ? m[1] : null;
  }

  function colorOf(protocol, i) {
    var base = String(protocol).replace(/-(pep|qpep|vpn)$/, '');
    return COLORS[base] || EXTRA[i % EXTRA.length];
  }

  function ms(v) {
    return Math.round(v) + ' ms';
  }

  function baseOptions(xTitle, yTitle) {
    return {
      animation: false,
      responsive: true,
      maintainAspectRatio: false,
      // Sharp on screen and on paper alike.
      devicePixelRatio: Math.max(window.devicePixelRatio || 1, 2),
      scales: {
        x: { type: 'linear', title: { display: true, text: xTitle } },
        y: { type: 'linear', title: { display: true, text: yTitle } },
      },
      plugins: { legend: { position: 'bottom', labels: { usePointStyle: true, boxWidth: 10 } } },
    };
  }

  function datasetStyle(series, i) {
    var c = colorOf(series.protocol, i);
    var v = VARIANTS[variantOf(series.protocol)];
    return {
      borderColor: c,
      backgroundColor: c,
      borderDash: v ? v.dash : [],
      pointStyle: v ? v.point : 'circle',
      pointRadius: 3,
      borderWidth: 1.5,
    };
  }

  // A series' runs, or with `split` ('with' / 'without') only those with
  // (without) a slot boundary during the load.
  function runsOf(s, split) {
    if (!split) return s.runs;
    return s.runs.filter(function (r, j) {
      return s.boundary && s.boundary[j] === (split === 'with');
    });
  }

  // The smallest and largest value of a metric in a block: both charts of
  // a split share one scale.
  function blockRange(block, metric) {
    var values = [];
    block.keys.forEach(function (key) {
      data.series[key].runs.forEach(function (r) {
        if (typeof r[metric.index] === 'number') values.push(r[metric.index]);
      });
    });
    return values.length ? { min: Math.min.apply(null, values), max: Math.max.apply(null, values) } : null;
  }

  // Empirical CDF: every run is a dot at (value, i/n), joined by steps.
  function cdfChart(canvas, block, metric, split) {
    var datasets = block.keys.map(function (key, i) {
      var s = data.series[key];
      var pts = runsOf(s, split)
        .filter(function (r) {
          return typeof r[metric.index] === 'number';
        })
        .map(function (r) {
          return { x: r[metric.index], run: r[0] };
        })
        .sort(function (a, b) {
          return a.x - b.x;
        });
      pts.forEach(function (p, j) {
        p.y = (j + 1) / pts.length;
      });
      var label = split ? s.protocol + ' (n ' + pts.length + ')' : s.protocol;
      return Object.assign(
        { label: label, protocol: s.protocol, data: pts, showLine: true, stepped: 'after' },
        datasetStyle(s, i),
      );
    });
    var opts = baseOptions(metric.label + ' (ms)', 'fraction of runs');
    opts.scales.y.min = 0;
    opts.scales.y.max = 1;
    var range = split ? blockRange(block, metric) : null;
    if (range) {
      // suggested, not fixed: the axis still ends on round ticks, the same
      // for both charts since both see the block's whole range
      opts.scales.x.suggestedMin = range.min;
      opts.scales.x.suggestedMax = range.max;
    }
    opts.plugins.tooltip = {
      callbacks: {
        label: function (ctx) {
          return ctx.dataset.protocol + ' run ' + ctx.raw.run + ': ' + ms(ctx.raw.x);
        },
      },
    };
    return new Chart(canvas, { type: 'scatter', data: { datasets: datasets }, options: opts });
  }

  // Every run as a dot in run order: drifts and outliers show here.
  function runsChart(canvas, block, metric) {
    var datasets = block.keys.map(function (key, i) {
      var s = data.series[key];
      var pts = s.runs
        .filter(function (r) {
          return typeof r[metric.index] === 'number';
        })
        .map(function (r) {
          return { x: r[0], y: r[metric.index] };
        });
      return Object.assign({ label: s.protocol, data: pts, showLine: false }, datasetStyle(s, i));
    });
    var opts = baseOptions('run', metric.label + ' (ms)');
    opts.scales.x.ticks = { precision: 0 };
    opts.plugins.tooltip = {
      callbacks: {
        label: function (ctx) {
          return ctx.dataset.label + ' run ' + ctx.raw.x + ': ' + ms(ctx.raw.y);
        },
      },
    };
    return new Chart(canvas, { type: 'scatter', data: { datasets: datasets }, options: opts });
  }

  // A bulk series as points: value i is the bin ending at t0_ms + i·step_ms.
  function stepMs(s) {
    return s.step_ms || s.t0_ms || 100;
  }
  function seriesPoints(s) {
    return s.y.map(function (y, i) {
      return { x: (s.t0_ms + i * stepMs(s)) / 1000, y: y };
    });
  }

  function bulkOptions(yTitle) {
    var opts = baseOptions('time from t0 (s)', yTitle);
    opts.scales.x.min = 0;
    opts.interaction = { mode: 'nearest', axis: 'x', intersect: false };
    opts.plugins.legend.labels.filter = function (item) {
      return item.text !== '';
    };
    // lines without dots: a box of no height is the legend's way to draw
    // each line with its dash
    opts.plugins.legend.labels.usePointStyle = false;
    opts.plugins.legend.labels.boxWidth = 28;
    opts.plugins.legend.labels.boxHeight = 0;
    return opts;
  }

  // A horizontal reference line across the chart (link rate, ratio 1).
  function referenceLine(label, y, xMax) {
    return {
      label: label,
      data: [
        { x: 0, y: y },
        { x: xMax, y: y },
      ],
      borderColor: '#8a8f96',
      backgroundColor: '#8a8f96',
      borderDash: [2, 3],
      borderWidth: 1.2,
      pointRadius: 0,
      pointHitRadius: 0,
      reference: true,
    };
  }

  // Mean goodput per bin, drawn as steps: each bin's rate holds over the
  // whole bin, which ends at its point.
  function goodputChart(canvas, block) {
    var xMax = 0;
    var datasets = block.goodput.map(function (s, i) {
      var pts = seriesPoints(s);
      if (pts.length) xMax = Math.max(xMax, pts[pts.length - 1].x);
      // nothing before the first bin: its step rises from 0 where it starts
      var start = { x: Math.max(0, (s.t0_ms - stepMs(s)) / 1000), y: 0 };
      return Object.assign({ label: s.protocol, data: [start].concat(pts), stepped: 'before' }, datasetStyle(s, i), {
        pointRadius: 0,
        pointHitRadius: 4,
      });
    });
    if (typeof block.link_rate_mbps === 'number')
      datasets.push(referenceLine('link ' + block.link_rate_mbps + ' Mbit/s', block.link_rate_mbps, xMax));
    var opts = bulkOptions('goodput (Mbit/s)');
    opts.scales.x.max = xMax;
    opts.scales.y.min = 0;
    opts.plugins.tooltip = {
      filter: function (item) {
        return !item.dataset.reference && item.dataIndex > 0;
      },
      callbacks: {
        title: function (items) {
          return items.length ? 'bin ending at ' + items[0].parsed.x.toFixed(1) + ' s' : '';
        },
        label: function (ctx) {
          return ctx.dataset.label + ': ' + ctx.parsed.y.toFixed(2) + ' Mbit/s';
        },
      },
    };
    return new Chart(canvas, { type: 'line', data: { datasets: datasets }, options: opts });
  }

  // Kosek et al.'s Figure 2 on a log scale, where ×2 and ×0.5 are as far from 1.
  function ratioChart(canvas, block) {
    var xMax = 0;
    var datasets = block.ratio.map(function (s, i) {
      var pts = seriesPoints(s);
      if (pts.length) xMax = Math.max(xMax, pts[pts.length - 1].x);
      // the line of the variant over the plain protocol's colour; against
      // another variant (tcp-qpep / tcp-vpn) a colour of its own
      var style = datasetStyle({ protocol: s.protocol }, i);
      if (variantOf(s.base)) style.borderColor = style.backgroundColor = EXTRA[i % EXTRA.length];
      return Object.assign({ label: s.protocol + ' / ' + s.base, data: pts, spanGaps: false }, style, {
        pointRadius: 0,
        pointHitRadius: 4,
      });
    });
    datasets.push(referenceLine('', 1, xMax));
    var opts = bulkOptions('bytes received, first / second');
    opts.scales.x.max = xMax;
    opts.scales.y.type = 'logarithmic';
    // Over a wide range only 1, 2 and 5 (×10^k) are labelled, or they crowd.
    opts.scales.y.ticks = {
      callback: function (v, i, ticks) {
        var m = v / Math.pow(10, Math.floor(Math.log10(v) + 1e-9));
        var label = ticks.length <= 8 || Math.abs(m - 1) < 1e-6 || Math.abs(m - 2) < 1e-6 || Math.abs(m - 5) < 1e-6;
        return label ? '×' + Number(v.toPrecision(2)) : '';
      },
    };
    opts.plugins.tooltip = {
      filter: function (item) {
        return !item.dataset.reference;
      },
      callbacks: {
        title: function (items) {
          return items.length ? items[0].parsed.x.toFixed(1) + ' s from t0' : '';
        },
        label: function (ctx) {
          return ctx.dataset.label + ': ×' + ctx.parsed.y.toFixed(2);
        },
      },
    };
    return new Chart(canvas, { type: 'line', data: { datasets: datasets }, options: opts });
  }

  var bulkBlocks = {};
  (data.bulk || []).forEach(function (b) {
    bulkBlocks[b.id] = b;
  });
  Array.prototype.forEach.call(document.querySelectorAll('canvas[data-bulk]'), function (canvas) {
    var block = bulkBlocks[canvas.getAttribute('data-bulk')];
    if (!block) return;
    try {
      charts.push(
        canvas.getAttribute('data-chart') === 'ratio' ? ratioChart(canvas, block) : goodputChart(canvas, block),
      );
    } catch (e) {
      canvas.parentNode.textContent = 'chart failed: ' + e.message;
    }
  });

  var blocks = {};
  data.blocks.forEach(function (b) {
    blocks[b.id] = b;
  });
  var metrics = {};
  data.metrics.forEach(function (m, i) {
    metrics[m.key] = { label: m.label, index: i + 1 };
  });

  Array.prototype.forEach.call(document.querySelectorAll('canvas[data-block]'), function (canvas) {
    var block = blocks[canvas.getAttribute('data-block')];
    var metric = metrics[canvas.getAttribute('data-metric')];
    if (!block || !metric) return;
    try {
      charts.push(
        canvas.getAttribute('data-chart') === 'runs'
          ? runsChart(canvas, block, metric)
          : cdfChart(canvas, block, metric, canvas.getAttribute('data-split')),
      );
    } catch (e) {
      canvas.parentNode.textContent = 'chart failed: ' + e.message;
    }
  });

  // Charts keep their pixel size on paper unless told about the new width.
  window.addEventListener('beforeprint', function () {
    charts.forEach(function (c) {
      c.resize();
    });
  });
  window.addEventListener('afterprint', function () {
    charts.forEach(function (c) {
      c.resize();
    });
  });

  // Raw records: results.jsonl, gzip-compressed and base64-encoded, only
  // unpacked when a drill-down is first opened.
  var rawLines = null;
  function loadRaw() {
    if (rawLines) return rawLines;
    var el = document.getElementById('raw-records');
    if (!el) return Promise.reject(new Error('this report carries no raw records; see results.jsonl'));
    if (typeof DecompressionStream === 'undefined')
      return Promise.reject(new Error('this browser cannot unpack the embedded records; see results.jsonl'));
    var bin = atob(el.textContent.trim());
    var bytes = new Uint8Array(bin.length);
    for (var i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
    var stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream('gzip'));
    rawLines = new Response(stream).text().then(function (t) {
      return t.split('\n').filter(Boolean);
    });
    return rawLines;
  }

  Array.prototype.forEach.call(document.querySelectorAll('details.raw'), function (d) {
    d.addEventListener('toggle', function () {
      var pre = d.querySelector('pre');
      if (!d.open || pre.getAttribute('data-filled')) return;
      pre.textContent = 'unpacking…';
      loadRaw().then(
        function (lines) {
          var line = lines[Number(d.getAttribute('data-line')) - 1];
          pre.textContent = line ? JSON.stringify(JSON.parse(line), null, 2) : 'no such line';
          pre.setAttribute('data-filled', '1');
        },
        function (e) {
          pre.textContent = e.message;
        },
      );
    });
  });

  // A link to a run or a scenario's runs opens the <details> around it.
  function openTarget() {
    var el = location.hash.length > 1 ? document.getElementById(decodeURIComponent(location.hash.slice(1))) : null;
    if (!el) return;
    for (var d = el; d; d = d.parentElement) if (d.tagName === 'DETAILS') d.open = true;
    el.scrollIntoView();
  }
  window.addEventListener('hashchange', openTarget);
  openTarget();

  document.documentElement.setAttribute('data-charts', String(charts.length));
})();

// Runs inside the report (inlined, no modules, no network): draws a
// page-load run's waterfall, connection view, filmstrip and visual
// progress, and two median runs side by side, from the embedded data
// (harness/report/pageload/run-views.js), when its <details> is first
// opened. SVG and HTML are made element by element: every string from
// input (URLs, protocols, titles) reaches the page through textContent,
// never as markup; an image only from a data:image/jpeg URL.
(function () {
  'use strict';
  var data = JSON.parse(document.getElementById('report-data').textContent);
  var views = data.runViews || {};
  var compares = data.compareViews || [];
  var PHASES = data.phases || [];
  var SVG = 'http://www.w3.org/2000/svg';
  // The drawing's own coordinates; CSS scales it to the page's width.
  var WIDTH = 1200;
  var LABEL = 330; // the left column: a row's number, protocol, connection and URL
  var PLOT = WIDTH - LABEL - 12;
  var ROW = 14;
  var LANE = 18;
  var TOP = 18; // the time axis' labels
  var MARK_LABELS = { fcp: 'FCP', lcp: 'LCP', dcl: 'DOMContentLoaded', load: 'load' };

  function svgEl(name, attrs, parent) {
    var e = document.createElementNS(SVG, name);
    Object.keys(attrs || {}).forEach(function (k) {
      e.setAttribute(k, String(attrs[k]));
    });
    if (parent) parent.appendChild(e);
    return e;
  }
  function htmlEl(name, cls, parent, text) {
    var e = document.createElement(name);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    if (parent) parent.appendChild(e);
    return e;
  }
  function svgText(parent, x, y, text, cls) {
    var t = svgEl('text', { x: x, y: y, class: cls || '' }, parent);
    t.textContent = text;
    return t;
  }
  function tooltip(parent, text) {
    svgEl('title', {}, parent).textContent = text;
  }
  function ms(v) {
    return v >= 10000 ? (v / 1000).toFixed(1) + ' s' : Math.round(v) + ' ms';
  }
  function seconds(v) {
    return (v / 1000).toFixed(v % 1000 ? 1 : 0) + ' s';
  }

  // The time axis of a drawing: 0 to `end` (rounded up to a tick) over PLOT.
  function axisOf(end) {
    var steps = [100, 200, 500, 1000, 2000, 5000, 10000, 20000, 60000];
    var tick = steps[steps.length - 1];
    for (var i = 0; i < steps.length; i++)
      if (Math.max(end, 1) / steps[i] <= 12) {
        tick = steps[i];
        break;
      }
    var span = Math.max(tick, Math.ceil(Math.max(end, 1) / tick) * tick);
    return {
      tick: tick,
      span: span,
      x: function (t) {
        return LABEL + (Math.max(0, t) / span) * PLOT;
      },
      w: function (d) {
        return (d / span) * PLOT;
      },
    };
  }

  // Ticks, the satellite round trips and the page's events over a plot of `height`.
  function grid(svg, axis, height, wf) {
    for (var t = 0; t <= axis.span; t += axis.tick) {
      svgEl('line', { x1: axis.x(t), x2: axis.x(t), y1: TOP - 4, y2: height, class: 'wf-tick' }, svg);
      svgText(svg, axis.x(t), TOP - 6, seconds(t), 'wf-tick-label');
    }
    if (!wf) return;
    var rtts = wf.roundTrips || [];
    // a label every k-th round trip, so that the numbers do not overlap
    var every = Math.max(1, Math.ceil(22 / Math.max(axis.w(wf.rtt || 1), 1)));
    rtts.forEach(function (m) {
      var line = svgEl('line', { x1: axis.x(m.ms), x2: axis.x(m.ms), y1: TOP, y2: height, class: 'mk-rtt' }, svg);
      tooltip(line, 'round trip ' + m.n + ' (' + ms(m.ms) + ')');
      if (m.n % every === 0) svgText(svg, axis.x(m.ms) + 2, height - 2, String(m.n), 'rtt-label');
    });
    (wf.marks || []).forEach(function (m) {
      var line = svgEl(
        'line',
        { x1: axis.x(m.ms), x2: axis.x(m.ms), y1: TOP, y2: height, class: 'mk mk-' + m.key },
        svg,
      );
      tooltip(line, (MARK_LABELS[m.key] || m.key) + ' ' + ms(m.ms));
    });
  }

  function svgOf(holder, height, cls) {
    return svgEl(
      'svg',
      { viewBox: '0 0 ' + WIDTH + ' ' + height, width: WIDTH, height: height, class: cls, role: 'img' },
      holder,
    );
  }

  // "https://a.test/img/x.jpg" as "a.test/img/x.jpg", shortened in the middle.
  function shortUrl(url) {
    var s = String(url).replace(/^[a-z]+:\/\//i, '');
    return s.length > 34 ? s.slice(0, 15) + '…' + s.slice(-18) : s;
  }

  function rowTip(r, i, wf) {
    var lines = [
      '#' + (i + 1) + ' ' + r.method + ' ' + r.url,
      'status ' +
        r.status +
        (r.error ? ' (' + r.error + ')' : '') +
        ', ' +
        (r.protocol || 'protocol unknown') +
        ', connection ' +
        (r.connection || 'none'),
      'priority ' + (r.priority || '–') + ', ' + (r.type || '') + ', ' + (r.bytes === null ? '?' : r.bytes) + ' bytes',
      'start ' + ms(r.start) + (wf.rtt ? ' (round trip ' + (Math.floor(r.start / wf.rtt) + 1) + ')' : ''),
    ];
    PHASES.forEach(function (p, j) {
      if (r.phases[j] > 0) lines.push(p + ' ' + r.phases[j] + ' ms');
    });
    return lines.join('\n');
  }

  // A request's phases as bars from its start, `y` and `h` its band.
  function bars(g, r, axis, y, h) {
    var t = r.start;
    PHASES.forEach(function (p, j) {
      var d = r.phases[j];
      if (d > 0)
        svgEl('rect', { x: axis.x(t), y: y, width: Math.max(axis.w(d), 0.8), height: h, class: 'ph ph-' + p }, g);
      t += d;
    });
  }

  // A drawing of one band per item (`band` px high, striped), under the
  // time axis, with the round trips and events over it.
  function bands(holder, cls, items, band, wf, axis, drawBand) {
    var height = TOP + items.length * band + 14;
    var svg = svgOf(holder, height, cls);
    svg.setAttribute('data-bands', items.length);
    items.forEach(function (item, i) {
      var y = TOP + i * band;
      var g = svgEl('g', { class: 'wf-row' }, svg);
      if (i % 2) svgEl('rect', { x: 0, y: y, width: WIDTH, height: band, class: 'wf-stripe' }, g);
      drawBand(g, item, i, y);
    });
    grid(svg, axis, height, wf);
  }

  function drawWaterfall(holder, wf, axis) {
    bands(holder, 'waterfall', wf.rows, ROW, wf, axis, function (g, r, i, y) {
      svgText(g, 2, y + ROW - 3, String(i + 1), 'wf-num');
      svgText(g, 28, y + ROW - 3, r.protocol || '', 'wf-proto');
      svgText(g, 84, y + ROW - 3, r.connection === null ? '' : '#' + r.connection, 'wf-conn');
      svgText(g, 122, y + ROW - 3, shortUrl(r.url), 'wf-url');
      bars(g, r, axis, y + 2, ROW - 4);
      tooltip(g, rowTip(r, i, wf));
    });
  }

  function drawConnections(holder, wf, axis) {
    bands(holder, 'connections', wf.lanes, LANE, wf, axis, function (g, lane, i, y) {
      var name = lane.connection === null ? 'no connection id' : 'connection #' + lane.connection;
      svgText(g, 2, y + LANE - 5, name + ' · ' + (lane.protocol || '?') + ' · ' + lane.rows.length + ' req.', 'wf-url');
      lane.rows.forEach(function (ri) {
        var rg = svgEl('g', { class: 'lane-req' }, g);
        bars(rg, wf.rows[ri], axis, y + 3, LANE - 6);
        tooltip(rg, rowTip(wf.rows[ri], ri, wf));
      });
    });
  }

  // Frames are our own data: URLs of JPEGs (run-views.js); anything else is not shown.
  function frameSrc(view, i) {
    var src = view.frames && i >= 0 ? view.frames[i] : null;
    return typeof src === 'string' && /^data:image\/jpeg;base64,[A-Za-z0-9+/=]*$/.test(src) ? src : null;
  }

  function drawFilmstrip(holder, view, film, caption) {
    var strip = htmlEl('div', 'filmstrip', holder);
    if (caption) htmlEl('div', 'film-caption', strip, caption);
    var cells = htmlEl('div', 'film-cells', strip);
    film.cells.forEach(function (c) {
      var fig = htmlEl('figure', c.changed ? 'changed' : '', cells);
      var src = frameSrc(view, c.frame);
      if (src) {
        var img = htmlEl('img', null, fig);
        img.alt = 'frame at ' + ms(c.ms);
        img.src = src;
      } else htmlEl('div', 'blank', fig);
      htmlEl('figcaption', null, fig, seconds(c.ms));
    });
  }

  // The visual progress curves ([[ms, percent]…] each) on the waterfall's axis.
  function drawProgress(holder, curves, axis, wf) {
    var height = TOP + 70;
    var svg = svgOf(holder, height, 'progress');
    var y = function (p) {
      return height - 8 - (Math.max(0, Math.min(100, p)) / 100) * (height - TOP - 12);
    };
    [0, 50, 100].forEach(function (p) {
      svgEl('line', { x1: LABEL, x2: LABEL + PLOT, y1: y(p), y2: y(p), class: 'wf-tick' }, svg);
      svgText(svg, LABEL - 4, y(p) + 4, p + ' %', 'axis-label');
    });
    curves.forEach(function (c, i) {
      svgText(svg, 2, TOP + 14 + i * 14, c.label, 'progress-label progress-' + i);
      var pts = [];
      var last = 0;
      c.points.forEach(function (p) {
        // a step: progress holds until the next frame
        pts.push(axis.x(p[0]) + ',' + y(last));
        pts.push(axis.x(p[0]) + ',' + y(p[1]));
        last = p[1];
      });
      svgEl('polyline', { points: pts.join(' '), class: 'progress-line progress-' + i }, svg);
    });
    grid(svg, axis, height, wf);
  }

  function heading(holder, text) {
    htmlEl('h4', 'view-heading', holder, text);
  }

  function drawRun(holder, view) {
    var axis = axisOf(view.end);
    var wf = view.waterfall;
    if (view.film) {
      heading(holder, 'Filmstrip');
      drawFilmstrip(holder, view, view.film);
    }
    if (view.progress && view.progress.length) {
      heading(holder, 'Visual progress');
      drawProgress(holder, [{ label: 'this run', points: view.progress }], axis, wf);
    }
    if (wf) {
      heading(holder, 'Waterfall · ' + wf.rows.length + ' requests');
      drawWaterfall(holder, wf, axis);
      heading(holder, 'Connections · ' + wf.lanes.length);
      drawConnections(holder, wf, axis);
    }
  }

  function drawCompare(holder, c) {
    var axis = axisOf(c.end);
    var sides = [c.a, c.b].filter(Boolean);
    sides.forEach(function (s) {
      var v = views[s.view];
      if (s.film) drawFilmstrip(holder, v, s.film, v.title);
    });
    var curves = sides
      .filter(function (s) {
        return views[s.view].progress && views[s.view].progress.length;
      })
      .map(function (s) {
        return { label: views[s.view].title, points: views[s.view].progress };
      });
    if (curves.length) {
      heading(holder, 'Visual progress');
      drawProgress(holder, curves, axis, null);
    }
    sides.forEach(function (s) {
      var v = views[s.view];
      if (!v.waterfall) return;
      heading(holder, 'Waterfall · ' + v.title);
      drawWaterfall(holder, v.waterfall, axis);
    });
  }

  // Drawn once, when its <details> is first opened.
  function onOpen(details, draw) {
    details.addEventListener('toggle', function () {
      var holder = details.querySelector('.view-draw');
      if (!details.open || !holder || holder.getAttribute('data-drawn')) return;
      holder.setAttribute('data-drawn', '1');
      try {
        draw(holder);
      } catch (e) {
        holder.textContent = 'drawing failed: ' + e.message;
        console.error('satbench report: drawing failed', e);
      }
    });
  }

  Array.prototype.forEach.call(document.querySelectorAll('details.run-view'), function (d) {
    var view = views[d.getAttribute('data-view')];
    if (view)
      onOpen(d, function (holder) {
        drawRun(holder, view);
      });
  });
  Array.prototype.forEach.call(document.querySelectorAll('details.compare-view'), function (d) {
    var c = compares[Number(d.getAttribute('data-compare'))];
    if (c)
      onOpen(d, function (holder) {
        drawCompare(holder, c);
      });
  });
})();

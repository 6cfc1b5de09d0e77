/* The HTML report's script (tools/report/mp_report_html.c): draws the
** chart, the flame graph and the tables from the page's data, and writes
** what it drew into #check for the tests. Names are untrusted: they only
** ever go into textContent and title, never into HTML. */
'use strict';
var D = JSON.parse(document.getElementById('data').textContent);
var CHECK = document.getElementById('check');
/* SVG's namespace, from an element the HTML parser made: the page holds
** no URL at all, not even one that is never fetched. */
var SVGNS = (function () {
  var t = document.createElement('div');
  t.innerHTML = '<svg>';
  return t.firstChild.namespaceURI;
})();
var KINDS = [[0xf0, 0x8c, 0x3c], [0xe6, 0xc8, 0x32], [0x5a, 0x96, 0xdc],
  [0x50, 0xb4, 0x64], [0xa0, 0xa0, 0xa0], [0xc8, 0xc8, 0xc8]];
var VIEWS = ['bytes allocated', 'allocations', 'bytes held at the end',
  'bytes held at the peak'];
/* Location fields in D.locations. */
var L_NAME = 0, L_KIND = 1, L_COUNT = 2, L_BYTES = 3, L_FREES = 4,
  L_FREED = 5, L_HELD = 6, L_BLOCKS = 7, L_TEMP = 8, L_TEMP_BYTES = 9;

function el(tag, cls, text) {
  var e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}
function svg(tag, attrs) {
  var e = document.createElementNS(SVGNS, tag), k;
  for (k in attrs) e.setAttribute(k, attrs[k]);
  return e;
}
function num(n) { return n.toLocaleString('en-US'); }
function bytes(n) {
  var u = ['B', 'KiB', 'MiB', 'GiB', 'TiB'], i = 0, v = n;
  while (v >= 1024 && i < u.length - 1) { v /= 1024; i++; }
  return (i ? v.toFixed(v < 10 ? 2 : 1) : String(v)) + ' ' + u[i];
}
function pct(a, b) { return b ? (100 * a / b).toFixed(2) + '%' : '-'; }
function signed(n) { return (n > 0 ? '+' : '') + num(n); }
function check(k, v) { CHECK.setAttribute('data-' + k, String(v)); }

/* -- Time --------------------------------------------------------------- */

/* Seconds where every stream has time marks (a point before the first
** mark is at 0 s), event numbers otherwise. */
var useTime = !!D.files && D.files.length > 0 && D.files.every(function (f) {
  return f.has_time;
});
function secs(p) { return p[3] === null ? 0 : p[3] / 1e9; }
function when(p) {
  return useTime ? secs(p).toFixed(3) + ' s' : 'event ' + num(p[0]);
}
function xOf(p) { return useTime ? secs(p) : p[0]; }

function fileName(i) {
  return D.files.length > 1 ? D.files[i].name + ': ' : '';
}

function summaryWhen() {
  var t = [], f = D.files[D.peak_file];
  if (f && f.peak) t.push('Peak ' + bytes(f.peak[1]) + ' at ' + when(f.peak) +
    (D.files.length > 1 ? ' of ' + f.name : '') + '.');
  D.files.forEach(function (f, i) {
    var last = f.points[f.points.length - 1];
    if (last) t.push((fileName(i) || 'The stream: ') +
      (useTime ? secs(last).toFixed(3) + ' s, ' : '') +
      num(f.events) + ' events' + (f.truncated ? ' (truncated)' : '') + '.');
  });
  if (!useTime) t.push('The stream has no time marks: moments are event numbers.');
  document.getElementById('when').textContent = t.join(' ');
}

/* -- Moments and what was live then ---------------------------------------- */

var moment = -1;

function momentLabel(m, i) {
  return (i + 1) + ': ' + fileName(m.file) + when(m.at) + ', ' +
    bytes(m.at[1]) + (m.peak ? ' (peak)' : '');
}

function fillMoments() {
  var s = document.getElementById('moment');
  D.moments.forEach(function (m, i) {
    var o = el('option', '', momentLabel(m, i));
    o.value = i;
    s.appendChild(o);
  });
  s.onchange = function () { choose(+s.value); };
  if (!D.moments.length)
    document.getElementById('moment-note').textContent =
      '(no moments: no memory events, or a stream read once, from standard input)';
}

function choose(i) {
  var m = D.moments[i], t = document.getElementById('live');
  if (!m) return;
  moment = i;
  document.getElementById('moment').value = i;
  document.getElementById('moment-note').textContent = m.live + ' locations held ' +
    bytes(m.at[1]) + ' in ' + num(m.at[2]) + ' blocks; the largest ' +
    m.rows.length + ' below.';
  table(t, [
    {name: 'location', get: function (r) { return D.locations[r[0]][L_NAME]; }},
    {name: 'bytes held', get: function (r) { return r[1]; }, num: true, fmt: bytes},
    {name: 'blocks', get: function (r) { return r[2]; }, num: true, fmt: num},
    {name: 'share', get: function (r) { return r[1]; }, num: true,
     fmt: function (v) { return pct(v, m.at[1]); }}
  ], m.rows, 1, 'live');
  var pt = document.getElementById('paths');
  if (m.paths.length) {
    table(pt, [
      {name: 'call path then (leaf first)', get: function (r) { return r[0]; }},
      {name: 'bytes held', get: function (r) { return r[1]; }, num: true, fmt: bytes},
      {name: 'share', get: function (r) { return r[1]; }, num: true,
       fmt: function (v) { return pct(v, m.at[1]); }}
    ], m.paths, 1, 'path');
  } else {
    pt.textContent = '';
  }
  check('moment', i + 1);
  check('moment-file', m.file);
  check('moment-event', m.at[0]);
  check('moment-bytes', m.at[1]);
  check('moment-peak', m.peak ? 1 : 0);
  if (D.kinds) drawKinds();
  drawMarks();
}

/* -- The chart ------------------------------------------------------------- */

var chart = {};

function drawChart() {
  /* As wide as its box (beside the kinds), so that its text keeps its
  ** shape. */
  var box = document.getElementById('chart'), H = 260;
  var W = Math.max(400, Math.round(box.clientWidth || 1000));
  var left = 80, right = 20, top = 15, bottom = 35, xmax = 0, ymax = 0;
  /* The process's resident set size (streams with INFO RSS): a second
  ** line on the same time axis, on its own scale at the right; what
  ** LuaJIT's allocator has mapped (INFO MAPPED) a third, on that scale. */
  var rmax = 0, hasRss = D.files.some(function (f) { return f.has_rss || f.has_mapped; });
  var mdrawn = 0;
  if (hasRss) right = 80;
  var s = svg('svg', {viewBox: '0 0 ' + W + ' ' + H,
    preserveAspectRatio: 'none'}), drawn = 0, rdrawn = 0;
  D.files.forEach(function (f) {
    f.points.forEach(function (p) {
      xmax = Math.max(xmax, xOf(p));
      ymax = Math.max(ymax, p[1]);
      if (f.has_rss && p[4]) rmax = Math.max(rmax, p[4]);
      if (f.has_mapped && p[5]) rmax = Math.max(rmax, p[5]);
    });
    if (f.peak) ymax = Math.max(ymax, f.peak[1]);
  });
  if (!xmax) xmax = 1;
  if (!ymax) ymax = 1;
  if (!rmax) rmax = 1;
  function X(x) { return left + (W - left - right) * x / xmax; }
  function Y(y) { return H - bottom - (H - top - bottom) * y / ymax; }
  function R(y) { return H - bottom - (H - top - bottom) * y / rmax; }
  chart = {X: X, Y: Y, svg: s, marks: []};
  s.appendChild(svg('line', {'class': 'axis', x1: left, y1: H - bottom, x2: W - right, y2: H - bottom}));
  s.appendChild(svg('line', {'class': 'axis', x1: left, y1: top, x2: left, y2: H - bottom}));
  [0, 0.25, 0.5, 0.75, 1].forEach(function (q) {
    var t = svg('text', {x: left - 6, y: Y(q * ymax) + 4, 'text-anchor': 'end'});
    t.textContent = bytes(Math.round(q * ymax));
    s.appendChild(t);
    if (hasRss) {
      t = svg('text', {'class': 'rss', x: W - right + 6, y: R(q * rmax) + 4});
      t.textContent = bytes(Math.round(q * rmax));
      s.appendChild(t);
    }
    t = svg('text', {x: X(q * xmax), y: H - bottom + 16, 'text-anchor': 'middle'});
    t.textContent = useTime ? (q * xmax).toFixed(2) + ' s' : num(Math.round(q * xmax));
    s.appendChild(t);
  });
  var t = svg('text', {x: W - right, y: H - 4, 'text-anchor': 'end'});
  t.textContent = useTime ? 'seconds since the stream began' : 'memory events';
  s.appendChild(t);
  if (hasRss) {
    s.appendChild(svg('line', {'class': 'axis', x1: W - right, y1: top, x2: W - right, y2: H - bottom}));
    t = svg('text', {'class': 'rss', x: 4, y: H - 4});
    t.textContent = 'dashed: process RSS, dotted: Lua allocator mapped (right axis)';
    s.appendChild(t);
  }
  /* A figure of the process (column k of the points) as a line per file
  ** on the right scale: the number of points drawn. */
  function gaugeLines(has, k, cls, label, hue, sl) {
    var n = 0;
    D.files.forEach(function (f, i) {
      if (!f[has]) return;
      var gp = f.points.filter(function (p) { return p[k]; });
      if (!gp.length) return;
      var l = svg('polyline', {'class': 'line ' + cls, stroke: 'hsl(' + (hue + 67 * i) % 360 + ',' + sl + ')',
        points: gp.map(function (p) { return X(xOf(p)).toFixed(1) + ',' + R(p[k]).toFixed(1); }).join(' ')});
      var tt = svg('title', {});
      tt.textContent = fileName(i) + label + ': ' + bytes(gp[0][k]) + ' at ' +
        when(gp[0]) + ', ' + bytes(gp[gp.length - 1][k]) + ' at ' + when(gp[gp.length - 1]);
      l.appendChild(tt);
      s.appendChild(l);
      n += gp.length;
    });
    return n;
  }
  mdrawn = gaugeLines('has_mapped', 5, 'mapped', 'Lua allocator mapped', 120, '70%,35%');
  rdrawn = gaugeLines('has_rss', 4, 'rss', 'process RSS', 30, '80%,45%');
  D.files.forEach(function (f, i) {
    var pts = [[0, 0, 0, 0]].concat(f.points), c = 'hsl(' + (210 + 67 * i) % 360 + ',60%,40%)';
    /* The exact peak between the points it falls in. */
    if (f.peak && f.peak[0]) {
      pts.push(f.peak);
      pts.sort(function (a, b) { return a[0] - b[0]; });
    }
    s.appendChild(svg('polyline', {'class': 'line', stroke: c, points:
      pts.map(function (p) { return X(xOf(p)).toFixed(1) + ',' + Y(p[1]).toFixed(1); }).join(' ')}));
    drawn += pts.length;
    if (f.peak && f.peak[0]) {
      s.appendChild(svg('circle', {'class': 'peak', cx: X(xOf(f.peak)), cy: Y(f.peak[1]), r: 4}));
      var l = svg('text', {x: X(xOf(f.peak)) + 6, y: Y(f.peak[1]) + 4});
      l.textContent = 'peak ' + bytes(f.peak[1]) + ' at ' + when(f.peak);
      if (X(xOf(f.peak)) > W * 0.7) {
        l.setAttribute('x', X(xOf(f.peak)) - 6);
        l.setAttribute('text-anchor', 'end');
      }
      s.appendChild(l);
    }
  });
  chart.cursor = svg('line', {'class': 'cursor', x1: 0, x2: 0, y1: top, y2: H - bottom, visibility: 'hidden'});
  s.appendChild(chart.cursor);
  D.moments.forEach(function (m, i) {
    var c = svg('circle', {'class': 'mark', cx: X(xOf(m.at)), cy: Y(m.at[1]), r: 3.5});
    var tt = svg('title', {});
    tt.textContent = momentLabel(m, i);
    c.appendChild(tt);
    c.onclick = function (e) { e.stopPropagation(); choose(i); };
    chart.marks.push(c);
    s.appendChild(c);
  });
  /* A click anywhere: the nearest moment. */
  s.onclick = function (e) {
    var r = s.getBoundingClientRect(), x = (e.clientX - r.left) * W / r.width;
    var best = -1, d = Infinity;
    D.moments.forEach(function (m, i) {
      var dx = Math.abs(X(xOf(m.at)) - x);
      if (dx < d) { d = dx; best = i; }
    });
    if (best >= 0) choose(best);
  };
  box.appendChild(s);
  check('chart-points', drawn);
  check('chart-rss-points', rdrawn);
  check('chart-mapped-points', mdrawn);
  check('chart-axis', useTime ? 'seconds' : 'events');
  check('chart-peak', D.peak_bytes);
}

function drawMarks() {
  chart.marks.forEach(function (c, i) {
    c.setAttribute('class', i === moment ? 'mark on' : 'mark');
  });
  if (moment >= 0) {
    var x = chart.X(xOf(D.moments[moment].at));
    chart.cursor.setAttribute('x1', x);
    chart.cursor.setAttribute('x2', x);
    chart.cursor.setAttribute('visibility', 'visible');
  }
}

/* -- The flame graph ------------------------------------------------------- */

/* Frames: [parent, name, kind, allocated, count, held, held at the peak]. */
/* Frames: [parent, name, kind, allocated, count, held, held at the peak]
** (a diff's: NEW's three, 0, then OLD's three). */
var F = [], kids = [];
var fg = {view: 0, zoom: 0, re: null, kind: -1};
/* The tree drawn: the data's, or the chosen kind's (D.kinds[fg.kind]). */
var FT = D;

function initFrames() {
  kids = F.map(function () { return []; });
  F.forEach(function (f, i) { if (f[0] >= 0) kids[f[0]].push(i); });
}

function frameName(i) { return i ? D.names[F[i][1]] : 'all'; }
/* A diff's frame: red as it grew, blue as it shrank, by its share. */
function growth(i) {
  var n = F[i][3 + fg.view], o = F[i][7 + fg.view], m = Math.max(n, o);
  return m ? (n - o) / m : 0;
}
function shade(i) {
  if (D.diff) {
    var g = growth(i), w = Math.round(230 - 150 * Math.abs(g));
    return g > 0 ? 'rgb(250,' + w + ',' + w + ')' : g < 0 ? 'rgb(' + w + ',' + w + ',250)' : 'rgb(235,235,235)';
  }
  var s = frameName(i), h = 0, k, c = KINDS[F[i][2]] || KINDS[4], d;
  for (k = 0; k < s.length; k++) h = (h * 31 + s.charCodeAt(k)) | 0;
  d = (Math.abs(h) % 33) - 16;
  return 'rgb(' + c.map(function (x) { return Math.max(0, Math.min(255, x + d)); }).join(',') + ')';
}

function drawFlame() {
  var box = document.getElementById('fg'), W = box.clientWidth || 1000;
  var v = 3 + fg.view, z = fg.zoom, total = F[z][v], rows = 0, drawn = 0;
  var up = [], k, unit = fg.view === 1 ? 'allocations' : 'bytes', hit = 0;
  var hits = [];
  box.textContent = '';
  for (k = F[z][0]; k >= 0; k = F[k][0]) up.unshift(k);
  function put(i, x, w, row, above) {
    var d = el('div', above ? 'up' : '', w > 30 ? frameName(i) : '');
    var m = fg.re !== null && i && fg.re.test(frameName(i));
    d.style.left = x.toFixed(1) + 'px';
    d.style.width = w.toFixed(1) + 'px';
    d.style.top = (row * 17) + 'px';
    d.style.background = shade(i);
    if (m) d.className += ' hit';
    d.title = frameName(i) + ': ' + num(F[i][v]) + ' ' + unit + ' (' +
      pct(F[i][v], F[0][v]) + ' of all)' + (D.diff ? ', OLD ' + num(F[i][v + 4]) +
      ', change ' + signed(F[i][v] - F[i][v + 4]) : '');
    d.onclick = function () { fg.zoom = i; drawFlame(); };
    box.appendChild(d);
    drawn++;
    rows = Math.max(rows, row + 1);
    return m;
  }
  up.forEach(function (a, row) { put(a, 0, W, row, true); });
  function walk(i, x, row, inHit) {
    var w = total ? F[i][v] * W / total : 0, cx = x;
    if (w < 0.5 || drawn > 6000) return;
    var m = put(i, x, w, row, false);
    if (m && !inHit) { hit += F[i][v]; hits.push(i); }
    kids[i].forEach(function (c) {
      walk(c, cx, row + 1, inHit || m);
      cx += total ? F[c][v] * W / total : 0;
    });
  }
  if (total) walk(z, 0, up.length, false);
  box.style.height = (Math.max(rows, 1) * 17 + 2) + 'px';
  document.getElementById('found').textContent = fg.re === null ? '' :
    'matched: ' + num(hit) + ' ' + unit + ' (' + pct(hit, total) + ')';
  document.getElementById('fg-note').textContent = total ?
    'The width of a frame is its share of ' + VIEWS[fg.view] + ' (' +
    num(total) + ' ' + unit + (z ? ' under ' + frameName(z) : ' in all') +
    '); callers above callees. Click: zoom; "whole graph": back.' :
    'Nothing to draw: no ' + VIEWS[fg.view] + '.';
  document.getElementById('fg-tip').textContent = D.diff ? 'Red: grew, blue: shrank (the deeper, the larger ' +
    'its share of the frame); widths are NEW\'s, so what is gone in NEW is only in the table.' :
    (fg.kind < 0 ? '' : 'Only the allocations of kind ' + FT.name + '. ') +
    'Frames: ' + num(F.length) +
    ' of ' + num(FT.frames_all) + ' in the data (' + num(FT.frames_cut) +
    (fg.kind < 0 ? '' : ' of kind ' + FT.name) +
    ' left out as under 1/5000 of every view' +
    (fg.kind < 0 ? '' : ' of the kind, or beyond the ' + num(D.kind_frames) +
     ' widest that the page keeps for a kind') +
    '; their values count in their callers); ' +
    (D.stacks ? 'call stacks.' : 'no call stacks in the stream: chunk, function and line.');
  check('flame-view', fg.view);
  check('flame-kind', fg.kind < 0 ? '' : FT.name);
  check('flame-total', total);
  check('flame-root', F[0][v]);
  check('flame-zoom', z ? frameName(z) : '');
  check('flame-drawn', drawn);
  check('flame-matched', hit);
}

/* The flame graph of kind k (an index into D.kinds; -1: all): the peak's
** view is not kept by kind. */
function setKind(k) {
  var s = document.getElementById('view');
  fg.kind = D.kinds && k >= 0 && k < D.kinds.length ? k : -1;
  FT = fg.kind < 0 ? D : D.kinds[fg.kind];
  F = FT.frames;
  initFrames();
  fg.zoom = 0;
  s.options[3].disabled = fg.kind >= 0 || (!D.diff && !D.has_moments);
  if (fg.kind >= 0 && fg.view === 3) {
    fg.view = 0;
    s.value = '0';
  }
  document.getElementById('fg-kind').value = String(fg.kind);
}

function setupFlame() {
  var s = document.getElementById('view'), q = document.getElementById('search');
  var ks = document.getElementById('fg-kind');
  if (!D.diff && !D.has_moments) s.options[3].disabled = true;
  if (ks && !D.kinds) ks.hidden = true;
  if (ks && D.kinds) {
    D.kinds.forEach(function (k, i) {
      var o = el('option', '', 'kind ' + k.name);
      o.value = i;
      ks.appendChild(o);
    });
    ks.onchange = function () { setKind(+ks.value); drawFlame(); };
  }
  s.onchange = function () { fg.view = +s.value; drawFlame(); };
  q.oninput = function () {
    try { fg.re = q.value ? new RegExp(q.value) : null; } catch (e) { fg.re = null; }
    drawFlame();
  };
  document.getElementById('reset').onclick = function () { fg.zoom = 0; drawFlame(); };
  window.addEventListener('resize', drawFlame);
}

/* -- Tables ---------------------------------------------------------------- */

var SHOWN = 200;

/* A sortable table: cols {name, get, num, fmt}; sorted by column by,
** largest first; a click on a header sorts by it (again: the other way). */
function table(t, cols, rows, by, key, onrow) {
  var order = rows.map(function (r, i) { return i; }), down = true;
  function sort() {
    var g = cols[by].get;
    order.sort(function (a, b) {
      var x = g(rows[a]), y = g(rows[b]);
      var c = x < y ? 1 : x > y ? -1 : 0;
      return (down ? c : -c) || a - b;
    });
  }
  function draw() {
    var head = el('tr'), n = Math.min(order.length, SHOWN), i;
    t.textContent = '';
    cols.forEach(function (c, k) {
      var th = el('th', (c.num ? 'n' : '') + (k === by ? ' sorted' + (down ? '' : ' up') : ''), c.name);
      th.onclick = function () {
        if (k === by) down = !down; else { by = k; down = !!c.num; }
        sort();
        draw();
      };
      head.appendChild(th);
    });
    t.appendChild(head);
    for (i = 0; i < n; i++) {
      var r = rows[order[i]], tr = el('tr');
      cols.forEach(function (c) {
        var v = c.get(r), td = el('td', c.num ? 'n' : c.cls || 'name', c.fmt ? c.fmt(v) : String(v));
        if (c.num) td.setAttribute('data-v', String(v));	/* Exact, for the tests. */
        tr.appendChild(td);
      });
      if (onrow) {
        tr.className = 'pick';
        tr.onclick = (function (row) { return function () { onrow(row); }; })(r);
      }
      t.appendChild(tr);
    }
    if (!n) {
      var tr = el('tr'), td = el('td', 'note', 'none');
      td.colSpan = cols.length;
      tr.appendChild(td);
      t.appendChild(tr);
    }
    var first = n ? rows[order[0]] : null;
    check(key + '-name', first ? cols[0].get(first) : '');
    check(key + '-value', first ? cols[by].get(first) : '');
    check(key + '-rows', n);
  }
  sort();
  draw();
}

function col(name, f, fmt) {
  return {name: name, num: true, fmt: fmt || num, get: function (l) { return l[f]; }};
}
var NAME = {name: 'location', get: function (l) { return l[L_NAME]; }};
var KIND = {name: 'kind', get: function (l) { return l[L_KIND]; }};

/* A click on a location's row: why it is alive, where the graph says. */
var pickWhy = D.retainers ? function (l) {
  if (!whyRow(D.locations.indexOf(l))) {
    document.getElementById('why-chains').textContent = '';
    document.getElementById('why-note').textContent = l[L_NAME] +
      ': no object of the heap graph was made there (or the location is past the ' +
      D.retainers.locations.length + ' with the most bytes in it that the page keeps).';
    check('why-location', l[L_NAME]);
    check('why-rows', 0);
  }
  document.getElementById('why').scrollIntoView();
} : undefined;

function drawTables() {
  var all = D.locations;
  function pick(f) { return all.filter(function (l) { return l[f] > 0; }); }
  var top = pick(L_BYTES), leaks = pick(L_HELD), temp = pick(L_TEMP);
  function note(id, rows, what) {
    document.getElementById(id).textContent = 'The ' + Math.min(rows.length, SHOWN) +
      ' largest of the ' + num(rows.length) + ' locations in the data ' + what +
      ' (of ' + num(D.locations_all) + ' in the profile: the page keeps the top 500 of each table).';
  }
  table(document.getElementById('top'), [NAME, KIND, col('allocations', L_COUNT),
    col('bytes allocated', L_BYTES, bytes), col('frees', L_FREES),
    col('bytes freed', L_FREED, bytes), col('held at the end', L_HELD, bytes),
    col('temporary', L_TEMP)], top, 3, 'top', pickWhy);
  note('top-note', top, 'that allocated');
  table(document.getElementById('leaks'), [NAME, KIND,
    col('bytes held', L_HELD, bytes), col('blocks', L_BLOCKS),
    col('bytes allocated', L_BYTES, bytes)], leaks, 2, 'leaks', pickWhy);
  note('leaks-note', leaks, 'that hold memory at the end');
  table(document.getElementById('temporary'), [NAME, KIND,
    col('temporary blocks', L_TEMP), col('temporary bytes', L_TEMP_BYTES, bytes),
    col('allocations', L_COUNT),
    {name: 'of its allocations', num: true, get: function (l) { return l[L_TEMP] / (l[L_COUNT] || 1); },
     fmt: function (v) { return (100 * v).toFixed(1) + '%'; }}], temp, 2, 'temp');
  note('temp-note', temp, 'with temporary allocations (freed by the very next memory event)');
}

/* -- Object kinds ---------------------------------------------------------- */

/* Beside the chart: each kind's allocations and what it holds at the end;
** a row chooses the kind's flame graph. */
function drawKinds() {
  var t = document.getElementById('kinds'), note = document.getElementById('kinds-note');
  if (!D.kinds) {
    t.hidden = true;
    note.textContent = 'Object kinds are not recorded in ' +
      (D.files.length > 1 ? 'these streams' : 'this stream') +
      ': only a stream with the profile extension (recorded with stacks, ' +
      'LJMPROF_STACKS) says what kind of object each allocation made.';
    check('kinds', 'none');
    return;
  }
  function total(k) { return k.alloc_bytes + k.realloc_bytes; }
  var m = D.moments[moment], then = {}, cols;
  if (m && m.kinds) m.kinds.forEach(function (h) { then[h[0]] = h[1]; });
  cols = [
    {name: 'kind', cls: 'kind', get: function (k) { return k.name; }},
    {name: 'allocated', num: true, fmt: bytes, get: total},
    {name: 'allocations', num: true, fmt: num, get: function (k) { return k.allocs + k.reallocs; }},
    {name: 'held at end', num: true, fmt: bytes, get: function (k) { return k.held; }},
    {name: 'blocks', num: true, fmt: num, get: function (k) { return k.held_blocks; }}
  ];
  /* What each kind held at the moment chosen on the chart. */
  if (m && m.kinds)
    cols.push({name: 'held then', num: true, fmt: bytes,
      get: function (k) { return then[k.number] || 0; }});
  table(t, cols, D.kinds, 1, 'kinds', function (k) {
    setKind(D.kinds.indexOf(k));
    drawFlame();
  });
  note.textContent = 'Bytes allocated and reallocated by the kind of object made ' +
    '(a free is of its block\'s kind), and held at the end' + (m && m.kinds ?
    ' and then: at ' + when(m.at) + (m.peak ? ' (the peak)' : '') +
    ', by blocks made in ' + (D.files.length > 1 ? 'its stream' : 'the stream') : '') +
    '. Click a kind for its flame graph.';
  check('kinds', D.kinds.length);
}

/* -- Why is it alive (the heap graph's chains) ---------------------------- */

/* D.retainers, where the input has a heap graph: for the locations of
** the tables with objects in it, their figures and their chains from the
** roots, grouped by shape. The location chosen in the list (or by a
** click on a row of a table, or #why=NAME) is shown. */
var why = {byRow: {}};

function setupWhy() {
  var s = document.getElementById('why-loc'), note = document.getElementById('why-note');
  if (!D.retainers) {
    s.hidden = true;
    document.getElementById('why-chains').hidden = true;
    note.textContent = 'No heap graph in this input (take one with ' +
      'misc.memprof.snapshot{graph = true} or LJMPROF_GRAPH=yes with ' +
      'LJMPROF_SNAPSHOT_SIGNAL).';
    check('why', 'none');
    return;
  }
  D.retainers.locations.forEach(function (r, i) {
    (why.byRow[r.row] = why.byRow[r.row] || []).push(i);
    var o = el('option', '', D.locations[r.row][L_NAME] + ' (' + bytes(r.bytes) + ')');
    o.value = i;
    s.appendChild(o);
  });
  s.onchange = function () { showWhy(+s.value); };
  check('why', D.retainers.locations.length);
}

/* The location of page row `row`, when the graph has objects of it. */
function whyRow(row) {
  var w = why.byRow[row];
  if (w) showWhy(w[0]);
  return !!w;
}

function objects(n) { return num(n) + (n === 1 ? ' object' : ' objects'); }

function showWhy(i) {
  var R = D.retainers, r = R && R.locations[i], t = document.getElementById('why-chains');
  var note = document.getElementById('why-note'), text;
  if (!r) {
    if (R) note.textContent = R.locations.length ? 'Choose a location.' :
      'No object of the heap graph was made at a location the tables list.';
    return;
  }
  document.getElementById('why-loc').value = i;
  text = D.locations[r.row][L_NAME] + ': ' + objects(r.objects) + ', ' +
    bytes(r.bytes) + ' in the heap graph of snapshot ' + R.snapshot + ', ' +
    bytes(r.retained) + ' retained (what would be freed with them).';
  if (r.unreached_objects)
    text += ' ' + objects(r.unreached_objects) + ', ' + bytes(r.unreached_bytes) +
      ', are reached from no root: garbage the next collection frees.';
  if (r.chains_all > r.chains.length)
    text += ' The ' + r.chains.length + ' largest of ' + num(r.chains_all) + ' chains below.';
  note.textContent = text;
  table(t, [
    {name: 'chain from a root (indices folded to [*])', get: function (c) { return c.chain; }},
    {name: 'objects', num: true, fmt: num, get: function (c) { return c.objects; }},
    {name: 'bytes', num: true, fmt: bytes, get: function (c) { return c.bytes; }},
    {name: 'held by', cls: 'holder', get: function (c) {
      return c.holder ? 'one ' + c.holder.kind + ' made at ' + c.holder.location :
        '(a root, or several objects)';
    }},
    {name: 'which retains', num: true, fmt: bytes, get: function (c) {
      return c.holder ? c.holder.retained : 0;
    }}
  ], r.chains, 2, 'why');
  check('why-location', D.locations[r.row][L_NAME]);
  check('why-retained', r.retained);
}

/* -- Start: #at=peak|end|N (the Nth moment), #view=0..3, #search=RE,
** #kind=NAME, #why=LOCATION --------------------------------------------- */

function fromHash() {
  var h = location.hash.replace(/^#/, '').split('&'), at = null;
  h.forEach(function (kv) {
    var i = kv.indexOf('='), k = kv.slice(0, i), v = decodeURIComponent(kv.slice(i + 1));
    if (k === 'at') at = v;
    else if (k === 'kind') fg.wantKind = v;
    else if (k === 'why') why.want = v;
    else if (k === 'view' && /^[0-3]$/.test(v)) {
      fg.view = +v;
      document.getElementById('view').value = v;
    } else if (k === 'search') {
      document.getElementById('search').value = v;
      try { fg.re = v ? new RegExp(v) : null; } catch (e) { fg.re = null; }
    }
  });
  return at;
}

function start() {
  var at = fromHash(), i = -1;
  F = D.frames;
  initFrames();
  summaryWhen();
  fillMoments();
  drawKinds();	/* Before the chart, which takes the width left. */
  drawChart();
  setupFlame();
  if (D.kinds && fg.wantKind !== undefined)
    setKind(D.kinds.map(function (k) { return k.name; }).indexOf(fg.wantKind));
  drawFlame();
  drawTables();
  setupWhy();
  if (D.retainers) {
    var w = 0;
    if (why.want !== undefined)
      D.retainers.locations.forEach(function (r, k) {
        if (D.locations[r.row][L_NAME] === why.want) w = k;
      });
    showWhy(w);
  }
  if (at === 'peak') {
    D.moments.forEach(function (m, k) { if (m.peak && (i < 0 || m.file === D.peak_file)) i = k; });
  } else if (at === 'end') {
    i = D.moments.length - 1;
  } else if (at !== null && /^[0-9]+$/.test(at)) {
    i = +at - 1;
  } else {
    D.moments.forEach(function (m, k) { if (m.peak && i < 0) i = k; });
  }
  if (i >= 0 && i < D.moments.length) choose(i);
  else check('moment', 0);
  check('ms', Math.round(performance.now()));	/* Since the page began. */
  check('done', 1);
}
/* -- A diff (ljmprof diff --format=html) ---------------------------------- */

/* Rows: [folded frames, in OLD, in NEW, OLD's allocated, count, held,
** NEW's the same]: merged into frames split at ';'. */
function diffFrames() {
  var at = {}, names = {};
  D.names = [''];
  F = [[-1, 0, 5, 0, 0, 0, 0, 0, 0, 0]];
  D.rows.forEach(function (r) {
    var parent = 0;
    r[0].split(';').forEach(function (name) {
      var key = parent + ';' + name, id = at[key], k;
      if (id === undefined) {
        if (names[name] === undefined) { names[name] = D.names.length; D.names.push(name); }
        id = at[key] = F.length;
        F.push([parent, names[name], 4, 0, 0, 0, 0, 0, 0, 0]);
      }
      parent = id;
    });
    for (var up = parent; up >= 0; up = F[up][0]) {
      for (var k = 0; k < 3; k++) {
        F[up][3 + k] += r[6 + k];
        F[up][7 + k] += r[3 + k];
      }
    }
  });
  initFrames();
  kids.forEach(function (c) {
    c.sort(function (a, b) { return frameName(a) < frameName(b) ? -1 : frameName(a) > frameName(b) ? 1 : 0; });
  });
}

function startDiff() {
  fg.view = D.value < 3 ? D.value : 0;
  fromHash();
  if (fg.view > 2) fg.view = 0;
  document.getElementById('view').value = String(fg.view);
  diffFrames();
  document.getElementById('when').textContent = 'OLD: ' + bytes(D.old.alloc_bytes) +
    ' allocated, ' + bytes(D.old.held_bytes) + ' held at the end; NEW: ' +
    bytes(D.new.alloc_bytes) + ' allocated, ' + bytes(D.new.held_bytes) + ' held at the end.';
  setupFlame();
  drawFlame();
  function d(k) { return function (r) { return r[6 + k] - r[3 + k]; }; }
  function v(k) { return function (r) { return r[k]; }; }
  table(document.getElementById('diff'), [
    {name: 'frames', get: function (r) { return r[0]; }},
    {name: 'status', get: function (r) { return !r[1] ? 'new' : !r[2] ? 'gone' : ''; }},
    {name: 'change of bytes allocated', num: true, get: d(0), fmt: signed},
    {name: 'change of allocations', num: true, get: d(1), fmt: signed},
    {name: 'change of bytes held', num: true, get: d(2), fmt: signed},
    {name: 'OLD allocated', num: true, get: v(3), fmt: bytes},
    {name: 'NEW allocated', num: true, get: v(6), fmt: bytes},
    {name: 'OLD held', num: true, get: v(5), fmt: bytes},
    {name: 'NEW held', num: true, get: v(8), fmt: bytes}
  ], D.rows, 2 + (D.value < 3 ? D.value : 0), 'diff');
  document.getElementById('diff-note').textContent = 'The ' + Math.min(D.rows.length, SHOWN) +
    ' first of ' + num(D.rows.length) + ' locations in the data (of ' + num(D.rows_all) +
    ' that changed or are in NEW: the page keeps the 5000 largest changes); click a column to sort by it.';
  check('done', 1);
}

if (D.diff) startDiff(); else start();

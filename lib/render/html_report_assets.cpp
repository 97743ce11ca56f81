// Inline CSS and JavaScript of report.html (see html_report_assets.hpp). Plain ES5-style script,
// no libraries, nothing fetched.
#include "html_report_assets.hpp"

namespace attn_viz {

const char* const report_css = R"CSS(
body { font-family: "DejaVu Sans", Verdana, sans-serif; color: #222; background: #fff; margin: 24px; }
h1 { font-size: 22px; margin: 0 0 12px; }
h2 { font-size: 18px; margin: 28px 0 10px; }
summary { font-size: 16px; font-weight: bold; cursor: pointer; margin: 14px 0 8px; }
.overview { max-width: 100%; height: auto; border: 1px solid #ddd; }
.heads { display: flex; flex-wrap: wrap; gap: 14px; }
figure { margin: 0; }
figcaption { font-size: 12px; margin-bottom: 4px; }
canvas.map { image-rendering: pixelated; border: 1px solid #999; cursor: crosshair; }
.legend { display: inline-block; width: 240px; height: 12px; border: 1px solid #999; vertical-align: middle; margin: 0 8px; }
#tooltip { position: fixed; pointer-events: none; background: #fffffe; border: 1px solid #888; padding: 4px 6px;
           font-size: 12px; white-space: pre; box-shadow: 0 1px 4px rgba(0,0,0,.2); display: none; z-index: 10; }
table.stats { border-collapse: collapse; font-size: 12px; margin-bottom: 12px; }
table.stats th, table.stats td { border: 1px solid #ddd; padding: 3px 8px; text-align: right; }
table.stats th { background: #f3f3f3; cursor: pointer; user-select: none; }
table.stats th.sorted-asc::after { content: " \25B2"; }
table.stats th.sorted-desc::after { content: " \25BC"; }
table.stats td.text { text-align: left; }
dl.scalars { display: grid; grid-template-columns: max-content auto; gap: 2px 12px; font-size: 13px; }
dl.scalars dt { font-weight: bold; }
#errors-section { color: #a00; }
)CSS";

const char* const report_script = R"JS(
(function () {
  'use strict';
  function report_error(text) {
    var list = document.getElementById('report-errors');
    var item = document.createElement('li');
    item.textContent = text;
    list.appendChild(item);
    document.getElementById('errors-section').hidden = false;
  }
  window.addEventListener('error', function (e) { report_error('Uncaught ' + e.message + ' (line ' + e.lineno + ')'); });
  window.addEventListener('unhandledrejection', function (e) { report_error('Unhandled rejection: ' + e.reason); });
  var console_error = console.error;
  console.error = function () {
    report_error('console.error: ' + Array.prototype.join.call(arguments, ' '));
    console_error.apply(console, arguments);
  };

  function format_number(x) {
    if (typeof x !== 'number') return x === null ? '' : String(x);
    if (Number.isInteger(x)) return String(x);
    return Math.abs(x) >= 1e-3 && Math.abs(x) < 1e5 ? String(Number(x.toPrecision(4))) : x.toExponential(3);
  }

  // Little-endian uint16 cells; 65535 = masked, else value = q / 65534 * max.
  function decode_map(base64, count) {
    var bytes = atob(base64), out = new Uint16Array(count);
    for (var i = 0; i < count; ++i) out[i] = bytes.charCodeAt(2 * i) | (bytes.charCodeAt(2 * i + 1) << 8);
    return out;
  }

  // Same mapping as the PNGs: linear, or log10 with floor max(vmin, vmax * 1e-4).
  function position(value, low, high, log_scale) {
    var t;
    if (log_scale) {
      var floor = Math.max(low, Math.max(high, 1e-30) * 1e-4);
      var a = Math.log10(floor), b = Math.log10(Math.max(high, 1e-30));
      if (b <= a) return value >= high ? 1 : 0;
      t = (Math.log10(Math.max(value, floor)) - a) / (b - a);
    } else {
      if (high <= low) return value >= high ? 1 : 0;
      t = (value - low) / (high - low);
    }
    return Math.min(1, Math.max(0, t));
  }

  function token_text(tokens, edges, index, noun) {
    var first = edges[index], last = edges[index + 1] - 1;
    if (first === last) return noun + ' #' + first + ' \u201c' + tokens[first] + '\u201d';
    return noun + 's #' + first + '\u2013#' + last + ' (\u201c' + tokens[first] + '\u201d \u2026 \u201c' + tokens[last] + '\u201d)';
  }

  function draw_head(data, head, caption) {
    var rows = data.row_edges.length - 1, cols = data.col_edges.length - 1;
    var cells = decode_map(head.data, rows * cols);
    var canvas = document.createElement('canvas');
    canvas.className = 'map';
    canvas.width = cols;
    canvas.height = rows;
    var cell = Math.max(1, Math.min(32, Math.floor(320 / Math.max(rows, cols))));
    canvas.style.width = (cols * cell) + 'px';
    canvas.style.height = (rows * cell) + 'px';
    var context = canvas.getContext('2d'), image = context.createImageData(cols, rows), map = data.colormap;
    for (var i = 0; i < rows * cols; ++i) {
      var r, g, b;
      if (cells[i] === 65535) { r = data.mask_color[0]; g = data.mask_color[1]; b = data.mask_color[2]; }
      else {
        var k = Math.round(position(cells[i] / 65534 * head.max, head.vmin, head.vmax, data.log_scale) * 255);
        r = map[3 * k]; g = map[3 * k + 1]; b = map[3 * k + 2];
      }
      image.data[4 * i] = r; image.data[4 * i + 1] = g; image.data[4 * i + 2] = b; image.data[4 * i + 3] = 255;
    }
    context.putImageData(image, 0, 0);
    var tooltip = document.getElementById('tooltip');
    canvas.addEventListener('mousemove', function (e) {
      var box = canvas.getBoundingClientRect();
      var c = Math.min(cols - 1, Math.floor((e.clientX - box.left) / box.width * cols));
      var r = Math.min(rows - 1, Math.floor((e.clientY - box.top) / box.height * rows));
      var q = cells[r * cols + c];
      var weight = q === 65535 ? 'masked' : format_number(q / 65534 * head.max) + (data.pooled ? ' (' + data.pool + ' of block)' : '');
      tooltip.textContent = caption + '\n' + token_text(data.query_tokens, data.row_edges, r, 'query') + '\n' +
                            token_text(data.key_tokens, data.col_edges, c, 'key') + '\nweight ' + weight;
      tooltip.style.left = (e.clientX + 14) + 'px';
      tooltip.style.top = (e.clientY + 14) + 'px';
      tooltip.style.display = 'block';
    });
    canvas.addEventListener('mouseleave', function () { tooltip.style.display = 'none'; });
    return canvas;
  }

  function head_labels(stats) {
    var labels = {};
    (Array.isArray(stats.heads) ? stats.heads : []).forEach(function (h) {
      if (h && typeof h === 'object' && typeof h.label === 'string') labels[h.layer + ':' + h.head] = h.label;
    });
    return labels;
  }

  function build_maps(data) {
    var container = document.getElementById('maps'), labels = head_labels(data.stats);
    data.layers.forEach(function (layer, index) {
      var details = document.createElement('details');
      details.open = index === 0 || data.layers.length <= 2;
      var summary = document.createElement('summary');
      summary.textContent = 'Layer ' + layer.number + ' (' + layer.heads.length + ' heads)';
      details.appendChild(summary);
      var grid = document.createElement('div');
      grid.className = 'heads';
      layer.heads.forEach(function (head, h) {
        var figure = document.createElement('figure'), caption = document.createElement('figcaption');
        var name = 'L' + layer.number + ' H' + h, label = labels[layer.number + ':' + h];
        caption.textContent = name + (label ? ' \u00b7 ' + label : '');
        figure.appendChild(caption);
        figure.appendChild(draw_head(data, head, caption.textContent));
        grid.appendChild(figure);
      });
      details.appendChild(grid);
      container.appendChild(details);
    });
    var stops = [];
    for (var k = 0; k <= 16; ++k) {
      var at = Math.min(255, k * 16);
      stops.push('rgb(' + data.colormap[3 * at] + ',' + data.colormap[3 * at + 1] + ',' + data.colormap[3 * at + 2] + ')');
    }
    document.getElementById('legend').style.background = 'linear-gradient(to right,' + stops.join(',') + ')';
  }

  function is_scalar(v) { return v === null || ['number', 'string', 'boolean'].indexOf(typeof v) >= 0; }

  function sortable_table(rows) {
    var columns = [];
    rows.forEach(function (row) {
      Object.keys(row).forEach(function (key) { if (is_scalar(row[key]) && columns.indexOf(key) < 0) columns.push(key); });
    });
    ['head', 'layer'].forEach(function (key) {  // identify the row first
      var at = columns.indexOf(key);
      if (at > 0) { columns.splice(at, 1); columns.unshift(key); }
    });
    var table = document.createElement('table'), head = table.createTHead().insertRow(), body = table.createTBody();
    table.className = 'stats';
    function fill(order) {
      body.innerHTML = '';
      order.forEach(function (row) {
        var tr = body.insertRow();
        columns.forEach(function (key) {
          var td = tr.insertCell(), v = row[key];
          td.textContent = v === undefined ? '' : format_number(v);
          if (typeof v === 'string') td.className = 'text';
        });
      });
    }
    columns.forEach(function (key) {
      var th = document.createElement('th');
      th.textContent = key;
      th.addEventListener('click', function () {
        var descending = th.className === 'sorted-asc';
        Array.prototype.forEach.call(head.cells, function (cell) { cell.className = ''; });
        th.className = descending ? 'sorted-desc' : 'sorted-asc';
        var sorted = rows.slice().sort(function (a, b) {
          var x = a[key], y = b[key];
          if (x === undefined || x === null) return 1;
          if (y === undefined || y === null) return -1;
          var c = typeof x === 'number' && typeof y === 'number' ? x - y : String(x).localeCompare(String(y));
          return descending ? -c : c;
        });
        fill(sorted);
      });
      head.appendChild(th);
    });
    fill(rows);
    return table;
  }

  function build_tables(stats) {
    var container = document.getElementById('tables'), scalars = document.createElement('dl');
    scalars.className = 'scalars';
    Object.keys(stats).forEach(function (key) {
      var value = stats[key];
      if (is_scalar(value)) {
        var dt = document.createElement('dt'), dd = document.createElement('dd');
        dt.textContent = key;
        dd.textContent = format_number(value);
        scalars.appendChild(dt);
        scalars.appendChild(dd);
      } else if (Array.isArray(value) && value.length > 0 && value.every(function (v) { return v && typeof v === 'object' && !Array.isArray(v); })) {
        var title = document.createElement('h3');
        title.textContent = key + ' (' + value.length + ' rows; click a column header to sort)';
        container.appendChild(title);
        container.appendChild(sortable_table(value));
      }
    });
    if (scalars.children.length) container.insertBefore(scalars, container.firstChild);
  }

  function main() {
    var data = JSON.parse(document.getElementById('report-data').textContent);
    build_maps(data);
    build_tables(data.stats);
    document.body.setAttribute('data-ready', '1');
  }
  try { main(); } catch (e) { report_error('Uncaught ' + (e && e.stack ? e.stack : e)); }
})();
)JS";

}  // namespace attn_viz

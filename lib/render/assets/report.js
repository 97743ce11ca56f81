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

  function element(tag, class_name, text) {
    var e = document.createElement(tag);
    if (class_name) e.className = class_name;
    if (text !== undefined) e.textContent = text;
    return e;
  }

  // Table cells: integers as they are, other numbers with 3 decimals (1 from 100 on, exponent from 1e5).
  function format_number(x) {
    if (typeof x !== 'number') return x === null ? '' : String(x);
    if (Number.isInteger(x)) return String(x);
    var a = Math.abs(x), text = a < 100 ? x.toFixed(3) : a < 1e5 ? x.toFixed(1) : x.toExponential(2);
    return text.replace(/^-(0\.0+)$/, '$1');
  }
  // Attention weights (tooltips, the view): 3 significant digits.
  function format_weight(x) { return x === null ? 'masked' : String(Number(x.toPrecision(3))); }

  // The zlib stream in base64 as bytes, inflated by the browser (DecompressionStream): no library.
  function inflate(base64) {
    var text = atob(base64), packed = new Uint8Array(text.length);
    for (var i = 0; i < text.length; ++i) packed[i] = text.charCodeAt(i);
    var stream = new Blob([packed]).stream().pipeThrough(new DecompressionStream('deflate'));
    return new Response(stream).arrayBuffer().then(function (buffer) { return new Uint8Array(buffer); });
  }

  // The labels of the heads of the set `name` (an encoder-decoder's heads carry their "stack"), by "layer:head".
  function head_labels(stats, name) {
    var labels = {};
    (Array.isArray(stats.heads) ? stats.heads : []).forEach(function (h) {
      if (h && typeof h === 'object' && typeof h.label === 'string' && (h.stack || '') === name) labels[h.layer + ':' + h.head] = h.label;
    });
    return labels;
  }

  // Every map with its codes: model.layers[l].heads[h] = {vmin, vmax, codes, name, label, layer,
  // index (its place in the layer's list), number (the head's number in the model)}.
  function make_model(data, codes) {
    var rows = data.row_edges.length - 1, cols = data.col_edges.length - 1, at = 0, labels = head_labels(data.stats, data.name || '');
    data.layers.forEach(function (layer) {
      layer.heads.forEach(function (head, h) {
        head.codes = codes.subarray(at, at + rows * cols);
        at += rows * cols;
        head.layer = layer.number;
        head.index = h;
        if (typeof head.number !== 'number') head.number = h;
        head.name = 'L' + layer.number + ' H' + head.number;
        head.label = labels[layer.number + ':' + head.number] || '';
      });
    });
    if (at !== codes.length) throw new Error('the maps hold ' + codes.length + ' cells, expected ' + at);
    return {data: data, rows: rows, cols: cols, layers: data.layers, palette: code_palette(data)};
  }

  // A cell's weight from its code: the inverse of its color position, linear or log10 between the
  // map's vmin and vmax (log: from max(vmin, vmax * 1e-4)); null when masked.
  function code_weight(model, head, code) {
    if (code === model.data.masked_code) return null;
    var t = code / model.data.top_code;
    if (!model.data.log_scale) return head.vmin + t * (head.vmax - head.vmin);
    var high = Math.max(head.vmax, 1e-30), low = Math.log10(Math.max(head.vmin, high * 1e-4));
    return Math.pow(10, low + t * (Math.log10(high) - low));
  }

  // Each code's color as r, g, b (masked: the mask color): code c takes colormap entry
  // round(c * 255 / top_code).
  function code_palette(data) {
    var palette = new Uint8Array(3 * 256);
    for (var code = 0; code < 256; ++code) {
      var k = 3 * Math.round(Math.min(code, data.top_code) * 255 / data.top_code);
      var color = code === data.masked_code ? data.mask_color : [data.colormap[k], data.colormap[k + 1], data.colormap[k + 2]];
      palette.set(color, 3 * code);
    }
    return palette;
  }

  // Cell `index` along an axis: its token, or for a pooled cell its first and last tokens.
  function block_text(tokens, edges, index) {
    var first = edges[index], last = edges[index + 1] - 1;
    return first === last ? tokens[first] : tokens[first] + '\u2026' + tokens[last];
  }
  function token_text(tokens, edges, index, noun) {
    var first = edges[index], last = edges[index + 1] - 1;
    if (first === last) return noun + ' #' + first + ' \u201c' + tokens[first] + '\u201d';
    return (noun === 'query' ? 'queries' : noun + 's') + ' #' + first + '\u2013#' + last + ' (\u201c' + tokens[first] + '\u201d \u2026 \u201c' + tokens[last] + '\u201d)';
  }

  function show_tooltip(text, e) {
    var tooltip = document.getElementById('tooltip');
    tooltip.textContent = text;
    tooltip.style.left = (e.clientX + 14) + 'px';
    tooltip.style.top = (e.clientY + 14) + 'px';
    tooltip.style.display = 'block';
  }
  function hide_tooltip() { document.getElementById('tooltip').style.display = 'none'; }

  // text shortened with an ellipsis to at most px wide in the context's font
  function fit_text(context, text, px) {
    if (context.measureText(text).width <= px) return text;
    while (text.length > 1 && context.measureText(text + '\u2026').width > px) text = text.slice(0, -1);
    return text + '\u2026';
  }

  // A head's map on a <canvas> of at most about side x side cells' pixels, query tokens on the
  // left, key tokens on top (every k-th, "#i token", when cells are smaller than a line of text).
  // Hovering shows the cell's tokens and weight; on_click(row) is called with the clicked row.
  function labelled_map(model, head, side, on_click) {
    var d = model.data, rows = model.rows, cols = model.cols;
    var cell = Math.max(1, Math.min(24, Math.floor(side / Math.max(rows, cols))));
    var step = Math.max(1, Math.ceil(13 / cell)), label_px = 110, font = '11px "DejaVu Sans", Verdana, sans-serif';
    function axis_labels(tokens, edges, count) {
      var labels = [];
      for (var i = 0; i < count; i += step) {
        var text = block_text(tokens, edges, i);
        labels.push({at: i, text: step > 1 ? '#' + edges[i] + ' ' + text : text});
      }
      return labels;
    }
    var row_labels = axis_labels(d.query_tokens, d.row_edges, rows), col_labels = axis_labels(d.key_tokens, d.col_edges, cols);
    var canvas = element('canvas', 'map'), context = canvas.getContext('2d');
    context.font = font;
    function widest(labels) {
      return labels.reduce(function (w, l) { return Math.max(w, Math.min(label_px, context.measureText(l.text).width)); }, 0);
    }
    var left = Math.ceil(widest(row_labels)) + 6, top = Math.ceil(widest(col_labels)) + 6;
    canvas.width = left + cols * cell + 1;
    canvas.height = top + rows * cell + 1;
    var cells = element('canvas'), cells_context = cells.getContext('2d'), image = cells_context.createImageData(cols, rows);
    cells.width = cols;
    cells.height = rows;
    for (var i = 0; i < rows * cols; ++i) {
      var p = 3 * head.codes[i];
      image.data[4 * i] = model.palette[p]; image.data[4 * i + 1] = model.palette[p + 1];
      image.data[4 * i + 2] = model.palette[p + 2]; image.data[4 * i + 3] = 255;
    }
    cells_context.putImageData(image, 0, 0);
    context.imageSmoothingEnabled = false;
    context.drawImage(cells, left, top, cols * cell, rows * cell);
    context.font = font;
    context.fillStyle = '#222';
    context.textBaseline = 'middle';
    context.textAlign = 'right';
    row_labels.forEach(function (l) { context.fillText(fit_text(context, l.text, label_px), left - 4, top + (l.at + 0.5) * cell); });
    context.textAlign = 'left';
    col_labels.forEach(function (l) {
      context.save();
      context.translate(left + (l.at + 0.5) * cell, top - 4);
      context.rotate(-Math.PI / 2);
      context.fillText(fit_text(context, l.text, label_px), 0, 0);
      context.restore();
    });
    function cell_at(e) {
      var box = canvas.getBoundingClientRect();
      var x = (e.clientX - box.left) * canvas.width / box.width - left, y = (e.clientY - box.top) * canvas.height / box.height - top;
      var c = Math.floor(x / cell), r = Math.floor(y / cell);
      return c >= 0 && c < cols && r >= 0 && r < rows ? {r: r, c: c} : null;
    }
    canvas.addEventListener('mousemove', function (e) {
      var at = cell_at(e);
      if (!at) return hide_tooltip();
      var weight = code_weight(model, head, head.codes[at.r * cols + at.c]);
      show_tooltip(head.name + (head.label ? ' \u00b7 ' + head.label : '') + '\n' + token_text(d.query_tokens, d.row_edges, at.r, 'query') + '\n' +
                   token_text(d.key_tokens, d.col_edges, at.c, 'key') + '\n' + d.value_name + ' ' + format_weight(weight) +
                   (d.pooled && weight !== null ? ' (' + d.pool + ' of block)' : ''), e);
    });
    canvas.addEventListener('mouseleave', hide_tooltip);
    canvas.addEventListener('click', function (e) {
      var at = cell_at(e);
      if (at && on_click) on_click(at.r);
    });
    return {canvas: canvas, left: left, top: top, cell: cell};
  }

  function build_maps(model, view, container) {
    model.layers.forEach(function (layer, index) {
      var details = element('details');
      details.open = index === 0 || model.layers.length <= 2;
      details.appendChild(element('summary', '', 'Layer ' + layer.number + ' (' + layer.heads.length + ' heads)'));
      var grid = element('div', 'heads');
      layer.heads.forEach(function (head, h) {
        var figure = element('figure');
        var range = model.data.scale === 'head' ? ' \u00b7 ' + format_weight(head.vmin) + '\u2013' + format_weight(head.vmax) : '';
        figure.appendChild(element('figcaption', '', head.name + (head.label ? ' \u00b7 ' + head.label : '') + range));
        figure.appendChild(labelled_map(model, head, 320, function (row) { view.select(index, h, row); }).canvas);
        grid.appendChild(figure);
      });
      details.appendChild(grid);
      container.appendChild(details);
    });
  }

  function is_scalar(v) { return v === null || ['number', 'string', 'boolean'].indexOf(typeof v) >= 0; }
  function is_head_ref(v) { return v !== null && typeof v === 'object' && typeof v.layer === 'number' && typeof v.head === 'number'; }
  function is_object(v) { return v !== null && typeof v === 'object' && !Array.isArray(v); }
  function head_ref_text(v) { return 'L' + v.layer + ' H' + v.head; }
  function cell_text(v) {
    if (is_head_ref(v)) return head_ref_text(v);
    if (typeof v === 'boolean') return v ? 'yes' : 'no';
    return v === undefined ? '' : format_number(v);
  }
  function sort_key(v) {
    if (is_head_ref(v)) return typeof v.index === 'number' ? v.index : v.layer * 1e6 + v.head;
    return typeof v === 'boolean' ? Number(v) : v;
  }

  // rows: objects; columns are their scalar and head-reference fields, `order` first.
  function sortable_table(rows, order) {
    var columns = order.filter(function (key) { return rows.some(function (row) { return key in row; }); });
    rows.forEach(function (row) {
      Object.keys(row).forEach(function (key) {
        if ((is_scalar(row[key]) || is_head_ref(row[key])) && columns.indexOf(key) < 0) columns.push(key);
      });
    });
    if (!order.length)
      ['head', 'layer'].forEach(function (key) {  // identify the row first
        var at = columns.indexOf(key);
        if (at > 0) { columns.splice(at, 1); columns.unshift(key); }
      });
    var table = element('table', 'stats'), head = table.createTHead().insertRow(), body = table.createTBody();
    function fill(order) {
      body.innerHTML = '';
      order.forEach(function (row) {
        var tr = body.insertRow();
        columns.forEach(function (key) {
          var td = tr.insertCell(), v = row[key];
          td.textContent = cell_text(v);
          if (typeof v === 'number' && !Number.isInteger(v)) td.title = String(v);
          if (typeof v === 'string' || is_head_ref(v)) td.className = 'text';
        });
      });
    }
    columns.forEach(function (key) {
      var th = element('th', '', key);
      th.addEventListener('click', function () {
        var descending = th.className === 'sorted-asc';
        Array.prototype.forEach.call(head.cells, function (cell) { cell.className = ''; });
        th.className = descending ? 'sorted-desc' : 'sorted-asc';
        var sorted = rows.slice().sort(function (a, b) {
          var x = sort_key(a[key]), y = sort_key(b[key]);
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

  // stats: top-level scalars as a two-column table (quantity, value), arrays of objects as sortable tables, arrays of lists of
  // heads (redundant groups) as lists; `findings` ({sentence, found, ...} objects) as sentences in
  // their own section at the top, those with found = false in gray.
  function build_tables(stats, column_order, notes) {
    var container = document.getElementById('tables'), scalars = element('table', 'stats scalars');
    scalars.id = 'summary-table';
    var scalar_head = scalars.createTHead().insertRow();
    scalar_head.appendChild(element('th', '', 'quantity'));
    scalar_head.appendChild(element('th', '', 'value'));
    var scalar_body = scalars.createTBody();
    Object.keys(stats).forEach(function (key) {
      var value = stats[key];
      if (is_scalar(value)) {
        var tr = scalar_body.insertRow();
        tr.appendChild(element('td', 'text', key.replace(/_/g, ' ')));
        tr.appendChild(element('td', typeof value === 'string' ? 'text' : '', typeof value === 'boolean' ? (value ? 'yes' : 'no') : format_number(value)));
      } else if (key === 'findings' && Array.isArray(value)) {
        var findings = document.getElementById('findings');
        value.forEach(function (f) {
          if (is_object(f) && typeof f.sentence === 'string') findings.appendChild(element('li', f.found === false ? 'not-found' : '', f.sentence));
        });
        document.getElementById('findings-section').hidden = findings.children.length === 0;
      } else if (Array.isArray(value) && value.length > 0 && value.every(is_object)) {
        container.appendChild(element('h3', '', key + ' (' + value.length + ' rows; click a column header to sort)'));
        if (notes[key]) container.appendChild(element('p', 'note', notes[key]));
        var scroll = element('div', 'table-scroll');
        scroll.appendChild(sortable_table(value, column_order[key] || []));
        container.appendChild(scroll);
      } else if (Array.isArray(value) && value.length > 0 && value.every(function (v) { return Array.isArray(v) && v.every(is_head_ref); })) {
        container.appendChild(element('h3', '', key + ' (' + value.length + ')'));
        var list = element('ul', 'groups');
        value.forEach(function (group) { list.appendChild(element('li', '', group.map(head_ref_text).join(', '))); });
        container.appendChild(list);
      }
    });
    if (scalar_body.rows.length) container.insertBefore(scalars, container.firstChild);
  }

  // The page's sets of maps: the data itself, then each of data.more_maps over the data's shared fields.
  function map_sets(data) {
    return [data].concat((data.more_maps || []).map(function (more) {
      var set = {};
      Object.keys(data).forEach(function (key) { set[key] = data[key]; });
      Object.keys(more).forEach(function (key) { set[key] = more[key]; });
      return set;
    }));
  }

  function main() {
    var data = JSON.parse(document.getElementById('report-data').textContent);
    build_tables(data.stats, data.column_order, data.table_notes);
    var sets = map_sets(data);
    return Promise.all(sets.map(function (set) { return inflate(set.codes); })).then(function (codes) {
      sets.forEach(function (set, k) {
        var model = make_model(set, codes[k]), id = set.name ? '-' + set.name : '';
        var view = attention_view(model, document.getElementById('view' + id));
        build_maps(model, view, document.getElementById('maps' + id));
      });
      document.body.setAttribute('data-ready', '1');
    });
  }
  try {
    main().catch(function (e) { report_error('Uncaught ' + (e && e.stack ? e.stack : e)); });
  } catch (e) { report_error('Uncaught ' + (e && e.stack ? e.stack : e)); }

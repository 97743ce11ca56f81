  // Head colors of the view when it shows every head of a layer (BertViz's, d3's category10).
  var head_colors = ['#1f77b4', '#ff7f0e', '#2ca02c', '#d62728', '#9467bd', '#8c564b', '#e377c2', '#7f7f7f', '#bcbd22', '#17becf'];
  function head_color(h) { return head_colors[h % head_colors.length]; }
  function with_alpha(hex, alpha) {
    var n = parseInt(hex.slice(1), 16);
    return 'rgba(' + (n >> 16) + ',' + ((n >> 8) & 255) + ',' + (n & 255) + ',' + Math.min(1, Math.max(0, alpha)).toFixed(3) + ')';
  }

  // The BertViz-style view in `container`: a layer and a head (or all heads of the layer, one
  // color each), query tokens on the left, key tokens on the right, a line from each query to each
  // key as opaque as the weight. Hovering a query shows only its lines and shades the keys by their
  // weight (the mean over the heads shown); clicking it keeps that query until it is clicked
  // again. The three strongest keys are marked (class "strongest", data-rank 1..3). The chosen
  // head's map is drawn beside, its query row outlined. Returns {select(layer_index, head, row)}.
  function attention_view(model, container) {
    var d = model.data, rows = model.rows, cols = model.cols, row_px = 16, gap_px = 180, shown = 3;
    var state = {layer: 0, head: 'all', query: null, locked: false};
    var controls = element('div', 'view-controls'), layer_select = element('select'), head_select = element('select');
    layer_select.id = container.id + '-layer';
    head_select.id = container.id + '-head';
    model.layers.forEach(function (layer, l) {
      var option = element('option', '', 'Layer ' + layer.number);
      option.value = String(l);
      layer_select.appendChild(option);
    });
    controls.appendChild(element('label', '', 'Layer '));
    controls.appendChild(layer_select);
    controls.appendChild(element('label', '', ' Head '));
    controls.appendChild(head_select);
    var legend = element('span', 'view-legend');
    controls.appendChild(legend);
    var status = element('p', 'view-status');
    var body = element('div', 'view-body'), queries = element('div', 'view-tokens view-queries');
    var lines = element('canvas', 'view-lines'), keys = element('div', 'view-tokens view-keys'), map_box = element('div', 'view-map');
    // Browsers refuse canvases taller than 32767 px: a longer one is drawn at a coarser vertical
    // resolution and stretched to the columns' height.
    var height = Math.max(rows, cols) * row_px;
    lines.width = gap_px;
    lines.height = Math.min(height, 32000);
    lines.style.height = height + 'px';
    var query_items = [], key_items = [];
    for (var r = 0; r < rows; ++r) query_items.push(token_item(queries, 'view-query', d.query_tokens, d.row_edges, r));
    for (var c = 0; c < cols; ++c) key_items.push(token_item(keys, 'view-key', d.key_tokens, d.col_edges, c));
    body.appendChild(queries);
    body.appendChild(lines);
    body.appendChild(keys);
    body.appendChild(map_box);
    container.appendChild(controls);
    container.appendChild(status);
    container.appendChild(body);

    function token_item(column, class_name, tokens, edges, index) {
      var item = element('div', class_name, block_text(tokens, edges, index));
      item.setAttribute('data-index', String(index));
      item.title = token_text(tokens, edges, index, class_name === 'view-query' ? 'query' : 'key');
      column.appendChild(item);
      return item;
    }
    query_items.forEach(function (item, r) {
      item.addEventListener('mouseenter', function () { if (!state.locked) { state.query = r; update(); } });
      item.addEventListener('mouseleave', function () { if (!state.locked) { state.query = null; update(); } });
      item.addEventListener('click', function () {
        var release = state.locked && state.query === r;
        state.locked = !release;
        state.query = release ? null : r;
        update();
      });
    });
    layer_select.addEventListener('change', function () { state.layer = Number(layer_select.value); fill_heads(); update_map(); update(); });
    head_select.addEventListener('change', function () {
      state.head = head_select.value === 'all' ? 'all' : Number(head_select.value);
      update_map();
      update();
    });

    function fill_heads() {
      head_select.innerHTML = '';
      var all = element('option', '', 'All heads');
      all.value = 'all';
      head_select.appendChild(all);
      model.layers[state.layer].heads.forEach(function (head, h) {
        var option = element('option', '', 'H' + head.number + (head.label ? ' \u00b7 ' + head.label : ''));
        option.value = String(h);
        head_select.appendChild(option);
      });
      if (state.head !== 'all' && state.head >= model.layers[state.layer].heads.length) state.head = 'all';
      head_select.value = String(state.head);
    }
    function shown_heads() {
      var heads = model.layers[state.layer].heads;
      return state.head === 'all' ? heads : [heads[state.head]];
    }
    // head's weights of query row r: [cols], masked keys 0
    function row_weights(head, r) {
      var out = new Float64Array(cols);
      for (var c = 0; c < cols; ++c) out[c] = code_weight(model, head, head.codes[r * cols + c]) || 0;
      return out;
    }

    var marker = element('div', 'view-marker'), map = null;
    function update_map() {
      map_box.innerHTML = '';
      map = null;
      if (state.head === 'all') {
        map_box.appendChild(element('p', 'view-note', 'Pick one head to see its map here.'));
        return;
      }
      var head = model.layers[state.layer].heads[state.head];
      map_box.appendChild(element('div', 'view-map-title', head.name + (head.label ? ' \u00b7 ' + head.label : '')));
      map = labelled_map(model, head, 420, function (row) { state.query = row; state.locked = true; update(); keep_in_sight(); });
      map_box.appendChild(map.canvas);
      map_box.appendChild(marker);
    }

    // Scrolls the token columns so that the chosen query's token is in the middle of the view
    // (long inputs: T = 256 is 4096 px of tokens).
    function keep_in_sight() {
      if (state.query === null) return;
      var box = body.getBoundingClientRect(), at = query_items[state.query].getBoundingClientRect();
      if (at.top < box.top || at.bottom > box.bottom) body.scrollTop += at.top - box.top - (box.height - at.height) / 2;
    }

    function draw_lines(heads) {
      var context = lines.getContext('2d');
      context.setTransform(1, 0, 0, lines.height / height, 0, 0);
      context.clearRect(0, 0, gap_px, height);
      context.lineWidth = 1.5;
      var from = state.query === null ? 0 : state.query, to = state.query === null ? rows : state.query + 1;
      heads.forEach(function (head) {
        var color = heads.length > 1 ? head_color(head.index) : head_color(0);
        for (var r = from; r < to; ++r) {
          var weights = row_weights(head, r);
          for (var c = 0; c < cols; ++c) {
            if (weights[c] < 0.01) continue;
            context.strokeStyle = with_alpha(color, weights[c]);
            context.beginPath();
            context.moveTo(0, (r + 0.5) * row_px);
            context.lineTo(gap_px, (c + 0.5) * row_px);
            context.stroke();
          }
        }
      });
    }

    function update() {
      var heads = shown_heads(), single = heads.length === 1;
      container.setAttribute('data-layer', String(model.layers[state.layer].number));
      container.setAttribute('data-head', String(state.head));
      container.setAttribute('data-query', state.query === null ? '' : String(state.query));
      legend.innerHTML = '';
      if (!single)
        heads.forEach(function (head) {
          var swatch = element('span', 'view-swatch', 'H' + head.number);
          swatch.style.borderColor = head_color(head.index);
          legend.appendChild(swatch);
        });
      draw_lines(heads);
      query_items.forEach(function (item, r) { item.className = 'view-query' + (r === state.query ? ' selected' : ''); });
      var mean = new Float64Array(cols);
      if (state.query !== null)
        heads.forEach(function (head) {
          var weights = row_weights(head, state.query);
          for (var c = 0; c < cols; ++c) mean[c] += weights[c] / heads.length;
        });
      var order = [];
      for (var c = 0; c < cols; ++c) if (mean[c] > 0) order.push(c);
      order.sort(function (a, b) { return mean[b] - mean[a] || a - b; });
      var top = order.length ? mean[order[0]] : 0, rank = {};
      order.slice(0, shown).forEach(function (c, i) { rank[c] = i + 1; });
      key_items.forEach(function (item, c) {
        item.className = 'view-key' + (rank[c] ? ' strongest' : '');
        item.style.background = state.query === null || top === 0 ? '' : with_alpha(single ? head_color(0) : '#555555', 0.75 * mean[c] / top);
        if (state.query === null) { item.removeAttribute('data-weight'); item.removeAttribute('data-rank'); return; }
        item.setAttribute('data-weight', format_weight(mean[c]));
        if (rank[c]) item.setAttribute('data-rank', String(rank[c])); else item.removeAttribute('data-rank');
      });
      var what = single ? heads[0].name + (heads[0].label ? ' \u00b7 ' + heads[0].label : '') : 'mean over the ' + heads.length + ' heads of layer ' + model.layers[state.layer].number;
      if (state.query === null) {
        status.textContent = 'Hover a query token (left) to see where it attends, click it to keep it. Lines: ' + (single ? what : 'one color per head') + '.';
      } else {
        status.textContent = token_text(d.query_tokens, d.row_edges, state.query, 'query') + ', ' + what + ': strongest ' +
          order.slice(0, shown).map(function (c) { return token_text(d.key_tokens, d.col_edges, c, 'key') + ' ' + format_weight(mean[c]); }).join(', ') +
          (state.locked ? ' (click it again to release)' : '');
      }
      marker.hidden = !map || state.query === null;
      if (map && state.query !== null) {
        marker.style.left = (map.canvas.offsetLeft + map.left - 1) + 'px';
        marker.style.top = (map.canvas.offsetTop + map.top + state.query * map.cell - 1) + 'px';
        marker.style.width = (cols * map.cell) + 'px';
        marker.style.height = map.cell + 'px';
      }
    }

    fill_heads();
    update_map();
    update();
    return {
      select: function (layer_index, head, row) {
        state.layer = layer_index;
        layer_select.value = String(layer_index);
        fill_heads();
        state.head = head;
        head_select.value = String(head);
        state.query = row;
        state.locked = true;
        update_map();
        update();
        container.scrollIntoView();
        keep_in_sight();
      }
    };
  }

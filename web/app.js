// rtsnap web page. No library, no inline script (the page is served with
// Content-Security-Policy: default-src 'self'). Every string that comes from the
// kernel or /etc/iproute2 goes into the page with textContent or as an attribute
// value, never as markup.
//
// Data: /events (the change stream, filtered like the route browser: every publication is
// an event, so it says when anything changed and whether the routes on screen did),
// /status (with If-None-Match: its ETag is the snapshot generation; polled every second
// only while the stream is not open), /healthz, /metrics (per-table multipath, expiring
// and per-protocol counts), /routes (server-side filters, paged with X-Next-After),
// /routes/lookup, /expiring, /web/about.json (host name and namespace).
//
// Family: with rtsnapd --family all (/status has "inet") a switch shows the IPv4 instance
// instead: the route browser asks /routes?family=inet and follows /events?family=inet, and
// the header, tables and charts come from /status's "inet" and /metrics' family="inet"
// series. The family is a parameter of the route filter (#routes?family=inet&...), left out
// for IPv6, the default.
//
// Namespaces: with rtsnapd --netns, /netns lists the named namespaces served beside the
// daemon's own (own first). The page then offers a selector; the namespace shown is one more
// parameter of the route filter in the URL (#routes?netns=NAME&...; the own namespace is left
// out), never sent to /routes. Every per-namespace request goes to /netns/NAME/... (api()),
// the /metrics series read are those labelled netns="NAME" (the own namespace's: no netns
// label), and the list is read again every 10 s: a namespace that is no longer served
// falls back to the own one, with a note. Names are text like the kernel's strings, and
// percent-encoded in paths.
//
// Watched routes (rtsnapd --watch NAME=SPEC): /metrics' rtsnap_watches says how many there
// are; when there are any, /watch (one list for all namespaces, not under /netns/NAME/) is
// read with every refresh (a new generation, a change on the stream, a poll whose /status
// changed) and the watches of the namespace shown (their "netns": "" for the own) are listed
// with their state in words and colour. The section is hidden when rtsnapd watches nothing.
'use strict';

(function () {
  const POLL_MS = 1000;
  const POLL_STREAM_MS = 10000; // with the stream open: /healthz and counters only
  const LIVE_MIN_MS = 1000; // at most one refresh per second from the stream
  const STREAM_RETRY_MS = 10000; // a stream refused: poll, and try again this much later
  const STREAM_DELAY_MS = 4000; // after the first render
  const FULL_STATUS_EVERY = 10; // polls: refresh counters even when the generation is the same
  const HISTORY_MAX = 600;
  const EXPIRING_MAX_ROWS = 500;
  const FILTER_KEYS = ['table', 'prefix', 'covers', 'dev', 'gateway', 'protocol', 'type',
    'metric', 'expiring'];
  const ADDR_KEYS = ['prefix', 'covers', 'gateway']; // dropped when the family changes
  const PLACEHOLDERS4 = { prefix: '192.0.2.0/24', covers: '192.0.2.1' };
  const NETNS_POLL_MS = 10000; // the namespace list (--netns all: names come and go)

  const st = {
    about: null,
    status: null, // last /status body
    statusAt: 0, // performance.now() when it arrived
    etag: null,
    family: 'inet6', // the instance shown: 'inet6', or 'inet' when /status has "inet"
    gen: null, // the generation of that instance's snapshot
    stale: false,
    reachable: true,
    polls: 0,
    history: { inet6: [], inet: [] }, // per family: {t: ms since epoch, routes}; the namespace shown's
    histories: new Map(), // namespace name ('' = own) -> its history
    netns: '', // the namespace shown: '' = rtsnapd's own, else a name listed by /netns
    nsList: undefined, // /netns's list; null: no /netns (the own namespace alone); undefined: not read yet
    nsKey: '', // the names the selector was built from
    epoch: 0, // bumped on a namespace switch: answers for the namespace before are dropped
    page: { qs: '', after: '', back: [], next: '', routes: [] },
    selected: null, // key of the route shown in the detail view
    countdowns: [], // {el, deadline (performance.now() ms), prefix}
    expCountdowns: [],
    violations: 0,
    stream: null, // the EventSource, or null while polling
    streamQs: null, // the filter it follows
    streamEvents: 0,
    lastChange: null, // {gen, added, removed, at}
    live: { timer: null, page: false, last: 0 },
    pollTimer: null,
    watchCount: null, // /metrics' rtsnap_watches: null while unknown (or an rtsnapd without it)
    watchSeq: 0, // renders of the watch list (tests wait on it)
  };

  const $ = (id) => document.getElementById(id);
  const SVGNS = 'http://www.w3.org/2000/svg';

  // element(tag, {attr: value}, child...): children are nodes or strings (text)
  function el(tag, attrs, ...kids) {
    const e = document.createElement(tag);
    for (const k in attrs || {}) e.setAttribute(k, attrs[k]);
    for (const c of kids) {
      if (c === null || c === undefined) continue;
      e.appendChild(typeof c === 'string' || typeof c === 'number' ? document.createTextNode(String(c)) : c);
    }
    return e;
  }
  function sv(tag, attrs, text) {
    const e = document.createElementNS(SVGNS, tag);
    for (const k in attrs || {}) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = String(text);
    return e;
  }
  function setText(id, text) { $(id).textContent = String(text); }
  function clear(node) { while (node.firstChild) node.removeChild(node.firstChild); }
  function fmtInt(n) { return Number(n).toLocaleString('en-US'); }

  // /status's object for the family shown: the top level (IPv6) or its "inet" (IPv4)
  function famStatus(s) { return s && st.family === 'inet' ? s.inet || null : s; }
  // rtsnapd --family inet: IPv4 alone, whose state /status has at the top level and in "inet"
  function only4(s) { return !!s && s.family === 'inet'; }
  function famGen(s) { const f = famStatus(s); return f ? f.generation : null; }

  // A path segment: every byte but A-Za-z0-9-._~ percent-encoded (as /netns writes it); a
  // name "." or ".." would be resolved away by the URL parser, so its dots are encoded too.
  function encName(name) {
    const e = encodeURIComponent(name).replace(/[!'()*]/g,
      (c) => '%' + c.charCodeAt(0).toString(16).toUpperCase());
    return e === '.' || e === '..' ? e.replace(/\./g, '%2E') : e;
  }
  // The path of a per-namespace view P ('status', 'routes?...') of the namespace shown.
  function nsPrefix(name) { return name ? '/netns/' + encName(name) + '/' : '/'; }
  function api(p) { return nsPrefix(st.netns) + p; }

  async function fetchJSON(url, headers) {
    const r = await fetch(url, { headers: headers || {}, cache: 'no-store' });
    let body = null;
    if (r.status !== 304) {
      const text = await r.text();
      try { body = JSON.parse(text); } catch (e) { body = { error: text.slice(0, 200) }; }
    }
    return { status: r.status, ok: r.ok, headers: r.headers, body: body };
  }
  function errorText(res) {
    return (res.body && typeof res.body.error === 'string') ? res.body.error : 'HTTP ' + res.status;
  }

  // ---- header

  function fmtAge(s) {
    if (s < 1) return (s * 1000).toFixed(0) + ' ms';
    if (s < 120) return s.toFixed(1) + ' s';
    if (s < 7200) return Math.floor(s / 60) + ' min ' + Math.floor(s % 60) + ' s';
    return (s / 3600).toFixed(1) + ' h';
  }

  // The header's host and namespace: /web/about.json's (rtsnapd's own namespace), or the
  // name of the named namespace shown.
  function renderAbout() {
    const a = st.about;
    if (st.netns) setText('f-netns', st.netns);
    if (!a) {
      if (st.netns) document.title = 'rtsnap (' + st.netns + ')';
      return;
    }
    setText('h-host', a.hostname ? 'on ' + a.hostname : '');
    setText('f-host', a.hostname || 'unknown');
    if (!st.netns) {
      setText('f-netns', a.netns ? a.netns : (a.netns_initial ? 'initial namespace'
        : 'unnamed (net:[' + a.netns_inode + '])'));
    }
    const ns = st.netns || a.netns;
    document.title = 'rtsnap' + (a.hostname ? ' - ' + a.hostname : '') + (ns ? ' (' + ns + ')' : '');
  }

  function renderHeader() {
    const s0 = st.status;
    const s = famStatus(s0);
    if (!s) return;
    $('family').hidden = !s0.inet || only4(s0); // offered only when rtsnapd follows both
    setText('f-version', s0.version);
    setText('f-gen', s.generation);
    setText('f-taken', s.taken_at.replace('T', ' ').replace('Z', ' UTC'));
    setText('f-routes', fmtInt(s.routes) + ' in ' + s.tables.length + ' tables');
    const errs = Object.keys(s.errors).filter((k) => s.errors[k] > 0);
    const nerr = errs.reduce((a, k) => a + s.errors[k], 0);
    setText('f-collector', (nerr ? nerr + ' errors' : 'no errors') +
      (s.last_error ? ' (last: ' + s.last_error + ')' : '') + '; last collection: ' + s.trigger +
      ' (' + fmtAge(s.duration_seconds) + ')');
    renderAge();
    const banner = $('banner');
    clear(banner);
    const lines = [];
    if (!st.reachable) lines.push('rtsnapd is not answering: the figures below are the last ones received.');
    if (st.stale || s.stale) {
      lines.push('STALE: the last collection failed or is overdue (/healthz answers 503). ' +
        'The routes shown may not be the kernel\'s current ones.');
    }
    if (nerr || (s.last_error && (st.stale || s.stale))) {
      lines.push('Collector errors: ' + (nerr ? errs.map((k) => k + ' ' + s.errors[k]).join(', ') : 'none counted') +
        (s.last_error ? '; last error: ' + s.last_error : ''));
    }
    for (const l of lines) banner.appendChild(el('p', {}, l));
    banner.hidden = lines.length === 0;
    banner.dataset.stale = (st.stale || s.stale) ? '1' : '0';
  }

  function renderAge() {
    const s = famStatus(st.status);
    if (!s) return;
    const age = s.age_seconds + (performance.now() - st.statusAt) / 1000;
    setText('f-age', fmtAge(age));
  }

  // ---- /metrics: per-table multipath/expiring and per-protocol counts

  function parseLabels(s) {
    const out = {};
    const re = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;
    let m;
    while ((m = re.exec(s)) !== null) {
      out[m[1]] = m[2].replace(/\\(.)/g, (x, c) => (c === 'n' ? '\n' : c));
    }
    return out;
  }

  function parseMetrics(text) {
    const r = { mpath: {}, exp: {}, proto: {}, byTable: {}, series: 0, watches: null };
    for (const line of text.split('\n')) {
      const w = /^rtsnap_watches (\S+)$/.exec(line);
      if (w) r.watches = Number(w[1]);
      const m = /^(rtsnap_routes|rtsnap_multipath_routes|rtsnap_routes_expiring)\{(.*)\} (\S+)$/.exec(line);
      if (!m) continue;
      const l = parseLabels(m[2]);
      const v = Number(m[3]);
      // the family shown; with --family all the other family's series are beside it
      if (l.family && l.family !== st.family) continue;
      // the namespace shown: netns="NAME", or no netns label for rtsnapd's own
      if ((l.netns === undefined ? '' : l.netns) !== st.netns) continue;
      r.series++;
      if (m[1] === 'rtsnap_multipath_routes') r.mpath[l.table] = v;
      else if (m[1] === 'rtsnap_routes_expiring') r.exp[l.table] = v;
      else {
        r.proto[l.protocol] = (r.proto[l.protocol] || 0) + v;
        r.byTable[l.table] = (r.byTable[l.table] || 0) + v;
      }
    }
    return r;
  }

  async function loadSummary() {
    const fam = st.family, ep = st.epoch;
    const s = famStatus(st.status);
    if (!s) return;
    let m = null;
    try {
      const r = await fetch('/metrics', { cache: 'no-store' });
      if (r.ok) m = parseMetrics(await r.text());
    } catch (e) { m = null; }
    if (m) st.watchCount = m.watches;
    // switched meanwhile: the other family's (namespace's) refresh draws it
    if (fam !== st.family || ep !== st.epoch) return;
    // a named namespace beyond --metrics-netns-limit has no series: its counts are unknown
    const omitted = !!m && m.series === 0 && !!st.netns && s.tables.length > 0;
    if (omitted) m = null;
    $('metrics-note').hidden = !omitted;
    const tbody = $('table-summary').tBodies[0];
    clear(tbody);
    const dl = $('table-names');
    clear(dl);
    dl.appendChild(el('option', { value: 'all' }));
    const sum = { routes: 0, mpath: 0, exp: 0, lines: 0 };
    for (const t of s.tables) {
      const mp = m && t.name in m.mpath ? m.mpath[t.name] : null;
      const ex = m && t.name in m.exp ? m.exp[t.name] : null;
      sum.routes += t.routes;
      sum.lines += t.proc_lines;
      sum.mpath += mp || 0;
      sum.exp += ex || 0;
      const show = el('button', { type: 'button', class: 'link', title: 'Browse the routes of this table' }, t.name);
      show.addEventListener('click', () => browseTable(t.name));
      tbody.appendChild(el('tr', { 'data-table': t.name },
        el('td', { class: 'num' }, String(t.id)),
        el('th', { scope: 'row' }, show),
        el('td', { class: 'num' }, fmtInt(t.routes)),
        el('td', { class: 'num' }, mp === null ? '?' : fmtInt(mp)),
        el('td', { class: 'num' }, ex === null ? '?' : fmtInt(ex)),
        el('td', { class: 'num' }, fmtInt(t.proc_lines))));
      dl.appendChild(el('option', { value: t.name }));
    }
    setText('sum-routes', fmtInt(sum.routes));
    setText('sum-mpath', m ? fmtInt(sum.mpath) : '?');
    setText('sum-exp', m ? fmtInt(sum.exp) : '?');
    setText('sum-lines', fmtInt(sum.lines));
    barChart($('chart-tables'), s.tables.map((t) => [t.name, t.routes]));
    if (m) {
      const protos = Object.keys(m.proto).map((p) => [p, m.proto[p]]);
      protos.sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
      barChart($('chart-protocols'), protos);
    } else if (omitted) {
      clear($('chart-protocols'));
    }
  }

  // Horizontal bars: label, bar scaled to the largest value, the value in words beside it.
  function barChart(svg, items) {
    clear(svg);
    const W = 340, row = 22, labelW = 110, valueW = 64;
    const max = Math.max(1, ...items.map((i) => i[1]));
    svg.setAttribute('viewBox', '0 0 ' + W + ' ' + Math.max(row, items.length * row));
    items.forEach(([label, v], i) => {
      const y = i * row;
      const g = sv('g', { class: 'bar-row' });
      g.appendChild(sv('title', {}, label + ': ' + v));
      const shown = label.length > 15 ? label.slice(0, 14) + '\u2026' : label;
      g.appendChild(sv('text', { x: 0, y: y + 15, class: 'label' }, shown));
      const span = W - labelW - valueW;
      g.appendChild(sv('rect', { class: 'track', x: labelW, y: y + 4, width: span, height: row - 8 }));
      const w = v > 0 ? Math.max(1, (v / max) * span) : 0;
      g.appendChild(sv('rect', { class: 'bar', x: labelW, y: y + 4, width: w.toFixed(1), height: row - 8 }));
      g.appendChild(sv('text', { x: labelW + span + 6, y: y + 15, class: 'value' }, fmtInt(v)));
      svg.appendChild(g);
    });
  }

  function renderSpark() {
    const svg = $('sparkline');
    clear(svg);
    const h = st.history[st.family];
    if (h.length === 0) return;
    const vals = h.map((p) => p.routes);
    const min = Math.min(...vals), max = Math.max(...vals);
    const t0 = h[0].t, t1 = h[h.length - 1].t;
    const pts = h.map((p) => {
      const x = t1 > t0 ? ((p.t - t0) / (t1 - t0)) * 300 : 300;
      const y = max > min ? 55 - ((p.routes - min) / (max - min)) * 50 : 30;
      return x.toFixed(1) + ',' + y.toFixed(1);
    });
    if (pts.length === 1) pts.unshift('0,' + pts[0].split(',')[1]);
    svg.appendChild(sv('polyline', { points: pts.join(' ') }));
    const mins = (t1 - t0) / 60000;
    setText('c-spark-text', 'now ' + fmtInt(vals[vals.length - 1]) + ' routes; min ' + fmtInt(min) +
      ', max ' + fmtInt(max) + ' over the last ' + (mins < 1 ? Math.round(mins * 60) + ' s' : mins.toFixed(1) + ' min') +
      ' (' + h.length + ' samples)');
  }

  // ---- route rendering shared by the browser, lookup and expiring views

  function nexthops(r) {
    if (Array.isArray(r.nexthops)) return r.nexthops;
    return [{ gateway: r.gateway, dev: r.dev }];
  }
  function nhCell(r, key) {
    const td = el('td', { class: key === 'gateway' ? 'addr' : '' });
    for (const nh of nexthops(r)) {
      let t = nh[key] === undefined ? '' : String(nh[key]);
      if (key === 'gateway' && r.nexthops && nh.weight !== undefined && nh.weight !== 1) t += ' weight ' + nh.weight;
      td.appendChild(el('span', { class: 'nh' }, t));
    }
    return td;
  }
  // The kernel's key of a route: what makes it unique in a snapshot.
  function routeKey(r) {
    return [r.table || 'main', r.dst, r.from || '', r.metric, r.type || '',
      nexthops(r).map((n) => (n.gateway || '') + '%' + (n.dev || '')).join(',')].join('|') +
      (r.tos === undefined ? '' : '|tos ' + r.tos); // IPv4: the TOS is part of the key
  }
  function fmtLeft(ms) {
    const neg = ms < 0;
    let s = Math.floor(Math.abs(ms) / 1000);
    const h = Math.floor(s / 3600); s -= h * 3600;
    const m = Math.floor(s / 60); s -= m * 60;
    const t = (h ? h + 'h ' : '') + (h || m ? m + 'min ' : '') + s + 's';
    return neg ? 'overdue ' + t : t;
  }
  function countdown(list, td, expiresS, t0) {
    const c = { el: td, deadline: t0 + expiresS * 1000 };
    td.textContent = fmtLeft(c.deadline - performance.now());
    list.push(c);
  }
  function tickCountdowns() {
    const now = performance.now();
    for (const c of st.countdowns) c.el.textContent = fmtLeft(c.deadline - now);
    for (const c of st.expCountdowns) c.el.textContent = fmtLeft(c.deadline - now);
  }

  function routeRow(r, t0, onShow) {
    const dst = el('button', { type: 'button', class: 'link addr', title: 'Show the full route object' }, r.dst);
    dst.addEventListener('click', () => onShow(r));
    const exp = el('td', { class: 'num' });
    if (r.expires !== undefined) countdown(st.countdowns, exp, r.expires, t0);
    const tr = el('tr', { 'data-key': routeKey(r) },
      el('td', {}, r.type || ''),
      el('td', { class: 'addr' }, dst),
      el('td', { class: 'addr' }, r.from || ''),
      nhCell(r, 'gateway'),
      nhCell(r, 'dev'),
      el('td', {}, r.table || 'main'),
      el('td', {}, r.protocol || 'boot'),
      el('td', {}, r.scope || ''),
      el('td', { class: 'num' }, String(r.metric === undefined ? 0 : r.metric)), // ip -j -4 omits 0
      el('td', {}, (r.flags || []).join(' ')),
      exp,
      el('td', {}, r.pref || ''));
    if (st.selected === routeKey(r)) tr.classList.add('selected');
    return tr;
  }

  // ---- route browser

  function switchFamily() {
    const v = document.querySelector('#family input[name=family]:checked');
    return v && v.value === 'inet' ? 'inet' : 'inet6';
  }
  // The route filter of the URL; netns: the namespace it is for (default: the one shown).
  function filterFromForm(netns) {
    const f = $('filter');
    const p = new URLSearchParams();
    const ns = netns === undefined ? st.netns : netns;
    if (ns) p.set('netns', ns); // the own namespace is the default: left out
    if (switchFamily() === 'inet') p.set('family', 'inet'); // IPv6 is the default: left out
    for (const k of FILTER_KEYS) {
      const v = f.elements[k].value.trim();
      if (v !== '' && !(k === 'table' && v === 'all')) p.set(k, v);
    }
    p.set('limit', f.elements.limit.value);
    return p;
  }
  function formFromFilter(p) {
    const f = $('filter');
    const fam = p.get('family') === 'inet' ? 'inet' : 'inet6';
    for (const r of document.querySelectorAll('#family input[name=family]')) r.checked = r.value === fam;
    for (const k in PLACEHOLDERS4) {
      const i = f.elements[k];
      if (i.dataset.placeholder6 === undefined) i.dataset.placeholder6 = i.placeholder;
      i.placeholder = fam === 'inet' ? PLACEHOLDERS4[k] : i.dataset.placeholder6;
    }
    $('tables-cmd').textContent = 'ip -' + (fam === 'inet' ? '4' : '6') + ' route show table all';
    for (const k of FILTER_KEYS) f.elements[k].value = p.get(k) || '';
    const lim = p.get('limit') || '100';
    if ([...f.elements.limit.options].some((o) => o.value === lim)) f.elements.limit.value = lim;
  }
  function hashFilter() {
    const h = location.hash;
    return h.startsWith('#routes?') ? new URLSearchParams(h.slice(8)) : null;
  }
  function browseTable(name) {
    const p = new URLSearchParams();
    if (st.netns) p.set('netns', st.netns);
    if (st.family === 'inet') p.set('family', 'inet');
    p.set('table', name);
    p.set('limit', $('filter').elements.limit.value);
    go(p);
  }
  function go(p) {
    const h = '#routes?' + p.toString();
    if (location.hash === h) startBrowse(p); else location.hash = h; // hashchange starts it
  }
  // The URL's filter for the query string qs of the namespace shown.
  function hashOf(qs) {
    const p = new URLSearchParams(qs);
    const q = new URLSearchParams();
    if (st.netns) q.set('netns', st.netns);
    for (const [k, v] of p) q.append(k, v);
    return '#routes?' + q.toString();
  }
  function startBrowse(p) {
    const asked = p.get('netns') || '';
    const ns = takeNetns(p);
    if (ns !== st.netns) {
      enterNetns(ns, p);
      if (ns !== asked) history.replaceState(null, '', hashOf(st.page.qs)); // fell back
      return;
    }
    if (ns !== asked) history.replaceState(null, '', hashOf(p.toString()));
    if (p.get('family') === 'inet' && st.status && !st.status.inet) p.delete('family'); // not followed
    if (only4(st.status)) p.set('family', 'inet'); // IPv6 not followed
    formFromFilter(p);
    st.page = { qs: p.toString(), after: '', back: [], next: '', routes: [] };
    const fam = p.get('family') === 'inet' ? 'inet' : 'inet6';
    if (fam !== st.family) {
      // another instance: its generation, header, tables, charts and expiring list too; the
      // route detail and the last change were the other instance's
      st.family = fam;
      st.gen = famGen(st.status);
      st.lastChange = null;
      closeDetail();
      renderHeader();
      renderSpark();
      if (st.status) refreshAll(); else loadPage(); // else the first /status draws the rest
    } else {
      loadPage();
    }
    if (st.stream || st.streamQs !== null) openStream(); // follow the new filter's routes
  }
  // The switch: the same filter in the other family, without its addresses (a prefix, an
  // address or a gateway of one family matches nothing in the other).
  function onFamilySwitch() {
    const p = filterFromForm();
    if ((p.get('family') === 'inet' ? 'inet' : 'inet6') === st.family) return;
    for (const k of ADDR_KEYS) p.delete(k);
    go(p);
  }

  // ---- namespaces (/netns)

  function served(name) { return !!st.nsList && st.nsList.some((n) => !n.own && n.name === name); }

  // The namespace a URL's filter asks for, taken out of it (it is no parameter of /routes); a
  // name /netns does not list gives the own namespace, and a note says so.
  function takeNetns(p) {
    const ns = p.get('netns') || '';
    p.delete('netns');
    if (ns && st.nsList !== undefined && !served(ns)) {
      noteGone(ns);
      return '';
    }
    return ns;
  }
  function noteGone(name) {
    const n = $('netns-note');
    n.textContent = 'The namespace \u201c' + name + '\u201d is not served by rtsnapd (deleted, or not ' +
      'given to --netns): showing rtsnapd\'s own namespace.';
    n.hidden = false;
  }

  // /netns read again: the selector follows it; the namespace shown, no longer listed, falls
  // back to the own one.
  async function loadNetns() {
    let res;
    try {
      res = await fetchJSON('/netns');
    } catch (e) { return; } // not answering: the polls say so
    if (res.ok && res.body && Array.isArray(res.body.namespaces)) st.nsList = res.body.namespaces;
    else if (res.status === 404) st.nsList = null; // an rtsnapd without namespaces
    else return;
    for (const k of [...st.histories.keys()]) if (k && !served(k)) st.histories.delete(k);
    renderNetnsList();
    if (st.netns && !served(st.netns)) {
      noteGone(st.netns);
      const p = filterFromForm('');
      if (location.hash.startsWith('#routes?')) history.replaceState(null, '', '#routes?' + p.toString());
      startBrowse(p);
    }
  }

  function renderNetnsList() {
    const named = (st.nsList || []).filter((n) => !n.own);
    $('netns-pick').hidden = named.length === 0; // rtsnapd's own namespace alone: no selector
    const key = JSON.stringify(named.map((n) => n.name));
    if (key !== st.nsKey) {
      st.nsKey = key;
      const sel = $('netns');
      clear(sel);
      sel.appendChild(el('option', { value: '' }, '(this host)'));
      for (const n of named) sel.appendChild(el('option', { value: n.name }, n.name));
    }
    document.documentElement.dataset.netnsListed = String(named.length);
    renderNetns();
  }

  // The selector and the raw-view links say the namespace shown.
  function renderNetns() {
    const sel = $('netns');
    if ([...sel.options].some((o) => o.value === st.netns)) sel.value = st.netns;
    for (const a of document.querySelectorAll('nav a[data-path]')) a.setAttribute('href', api(a.dataset.path));
  }

  function onNetnsSwitch() {
    const ns = $('netns').value;
    if (ns === st.netns) return;
    $('netns-note').hidden = true;
    go(filterFromForm(ns));
  }

  // Empty views while the namespace chosen is read: nothing of the one before stays on screen.
  function clearViews() {
    for (const id of ['route-table', 'table-summary', 'expiring-table', 'watch-table']) {
      clear($(id).tBodies[0]);
      delete $(id).dataset.count;
    }
    st.countdowns = [];
    st.expCountdowns = [];
    for (const id of ['chart-tables', 'chart-protocols', 'sparkline', 'table-names']) clear($(id));
    for (const id of ['sum-routes', 'sum-mpath', 'sum-exp', 'sum-lines', 'c-spark-text', 'expiring-state', 'watch-state']) setText(id, '');
    for (const id of ['f-gen', 'f-taken', 'f-age', 'f-routes', 'f-collector']) setText(id, '-');
    setText('routes-state', 'Loading\u2026');
    $('routes-state').classList.remove('error');
    $('metrics-note').hidden = true;
    $('banner').hidden = true;
    const out = $('lookup-result');
    clear(out);
    delete out.dataset.state;
    updatePager();
  }

  // Show namespace ns with the filter p (its family too): every view read afresh from its
  // paths, the change stream (if followed) reopened there.
  async function enterNetns(ns, p) {
    st.epoch++;
    const ep = st.epoch;
    const follow = st.stream !== null || st.streamQs !== null;
    if (st.stream) st.stream.close();
    st.stream = null;
    st.streamQs = null;
    st.netns = ns;
    if (!st.histories.has(ns)) st.histories.set(ns, { inet6: [], inet: [] });
    st.history = st.histories.get(ns);
    st.status = null;
    st.etag = null;
    st.gen = null;
    st.stale = false;
    st.reachable = true;
    st.polls = 0;
    st.lastChange = null;
    st.family = p.get('family') === 'inet' ? 'inet' : 'inet6'; // its first /status may undo it
    formFromFilter(p);
    st.page = { qs: p.toString(), after: '', back: [], next: '', routes: [] };
    closeDetail();
    clearViews();
    renderNetns();
    renderAbout();
    await poll();
    if (follow && ep === st.epoch) openStream();
  }

  async function loadPage() {
    const pg = st.page;
    const p = new URLSearchParams(pg.qs);
    if (pg.after) p.set('after', pg.after);
    const state = $('routes-state');
    const t0 = performance.now();
    let res;
    try {
      res = await fetchJSON(api('routes?' + p.toString()));
    } catch (e) {
      state.textContent = 'rtsnapd did not answer.';
      return;
    }
    if (pg !== st.page) return; // a newer query started meanwhile
    const tbody = $('route-table').tBodies[0];
    if (!res.ok) {
      clear(tbody);
      st.countdowns = [];
      state.textContent = 'The filter was refused: ' + errorText(res);
      state.classList.add('error');
      updatePager();
      return;
    }
    state.classList.remove('error');
    pg.next = res.headers.get('X-Next-After') || '';
    pg.routes = res.body;
    st.countdowns = [];
    clear(tbody);
    const frag = document.createDocumentFragment();
    for (const r of res.body) frag.appendChild(routeRow(r, t0, showDetail));
    tbody.appendChild(frag);
    const n = res.body.length;
    const pageNo = pg.back.length + 1;
    state.textContent = (n === 0 ? 'No route matches.' : 'Page ' + pageNo + ': ' + fmtInt(n) +
      (n === 1 ? ' route' : ' routes') + (pg.next ? '; more follow.' : '; last page.')) +
      ' (generation ' + (st.gen === null ? '?' : st.gen) + ')';
    $('route-table').dataset.count = String(n);
    $('route-table').dataset.ms = (performance.now() - t0).toFixed(1); // request + render (bench)
    $('route-table').dataset.gen = String(st.gen);
    updatePager();
    refreshDetail();
  }
  function updatePager() {
    const pg = st.page;
    $('page-first').disabled = pg.back.length === 0;
    $('page-prev').disabled = pg.back.length === 0;
    $('page-next').disabled = !pg.next;
  }

  function showDetail(r) {
    st.selected = routeKey(r);
    for (const tr of $('route-table').tBodies[0].rows) tr.classList.toggle('selected', tr.dataset.key === st.selected);
    setText('detail-name', r.dst + (r.table ? ' table ' + r.table : ''));
    setText('detail-json', JSON.stringify(r, null, 2));
    const d = $('detail');
    d.hidden = false;
    d.dataset.key = st.selected;
    d.focus();
  }
  function closeDetail() {
    $('detail').hidden = true;
    st.selected = null;
    for (const tr of $('route-table').tBodies[0].rows) tr.classList.remove('selected');
  }
  // After a refresh: keep showing the selected route's current object, or say it is gone.
  function refreshDetail() {
    if (!st.selected || $('detail').hidden) return;
    const r = st.page.routes.find((x) => routeKey(x) === st.selected);
    if (r) setText('detail-json', JSON.stringify(r, null, 2));
  }

  // ---- lookup

  async function lookup(ev) {
    if (ev) ev.preventDefault();
    const f = $('lookup-form');
    const p = new URLSearchParams();
    for (const k of ['addr', 'table', 'from']) {
      const v = f.elements[k].value.trim();
      if (v !== '') p.set(k, v);
    }
    const out = $('lookup-result');
    clear(out);
    out.dataset.state = 'loading';
    const ep = st.epoch;
    let res;
    try {
      res = await fetchJSON(api('routes/lookup?' + p.toString()));
      if (ep !== st.epoch) return; // another namespace chosen meanwhile
    } catch (e) {
      out.appendChild(el('p', { class: 'error' }, 'rtsnapd did not answer.'));
      out.dataset.state = 'error';
      return;
    }
    if (!res.ok) {
      out.appendChild(el('p', { class: 'error' }, (res.status === 404 ? 'No route: ' : 'Refused: ') + errorText(res)));
      out.dataset.state = res.status === 404 ? 'none' : 'error';
      return;
    }
    const r = res.body;
    const words = [p.get('addr')];
    if (p.get('from')) words.push('from', p.get('from'));
    if (r.type) words.unshift(r.type);
    const nh = nexthops(r);
    if (nh.length === 1) {
      if (nh[0].gateway) words.push('via', nh[0].gateway);
      if (nh[0].dev) words.push('dev', nh[0].dev);
    } else {
      words.push('via one of ' + nh.length + ' nexthops');
    }
    words.push('table', r.table || 'main');
    if (r.protocol) words.push('proto', r.protocol);
    if (r.metric !== undefined) words.push('metric', String(r.metric));
    if (r.pref) words.push('pref', r.pref);
    out.appendChild(el('p', { class: 'lookup-line' }, words.join(' ')));
    const table = el('table', { class: 'data routes', id: 'lookup-table' },
      el('caption', {}, 'Matching route: ' + r.dst),
      el('thead', {}, $('route-table').tHead.rows[0].cloneNode(true)));
    const tb = el('tbody');
    tb.appendChild(routeRow(r, performance.now(), showLookupJSON));
    table.appendChild(tb);
    out.appendChild(el('div', { class: 'scroll' }, table));
    out.appendChild(el('pre', { id: 'lookup-json' }, JSON.stringify(r, null, 2)));
    out.dataset.state = 'found';
  }
  function showLookupJSON() { const j = $('lookup-json'); if (j) j.scrollIntoView(); }

  // ---- expiring

  async function loadExpiring() {
    let res;
    const t0 = performance.now();
    const tbody = $('expiring-table').tBodies[0];
    if (st.family === 'inet') { // /expiring is the IPv6 instance's: IPv4 routes have no lifetime
      clear(tbody);
      st.expCountdowns = [];
      $('expiring-table').dataset.count = '0';
      setText('expiring-state', 'IPv4 routes have no lifetime.');
      return;
    }
    const ep = st.epoch;
    try {
      res = await fetchJSON(api('expiring'));
    } catch (e) { return; }
    if (!res.ok || st.family !== 'inet6' || ep !== st.epoch) return;
    clear(tbody);
    st.expCountdowns = [];
    const list = res.body;
    const frag = document.createDocumentFragment();
    for (const r of list.slice(0, EXPIRING_MAX_ROWS)) {
      const left = el('td', { class: 'num' });
      if (r.expires !== undefined) countdown(st.expCountdowns, left, r.expires, t0);
      frag.appendChild(el('tr', { 'data-key': routeKey(r) },
        left,
        el('td', { class: 'addr' }, r.dst),
        el('td', { class: 'addr' }, r.from || ''),
        nhCell(r, 'gateway'),
        nhCell(r, 'dev'),
        el('td', {}, r.table || 'main'),
        el('td', {}, r.protocol || 'boot'),
        el('td', {}, r.expired ? 'expired, the kernel still lists it' : 'active')));
    }
    tbody.appendChild(frag);
    $('expiring-table').dataset.count = String(list.length);
    setText('expiring-state', list.length === 0 ? 'No route has a lifetime.'
      : fmtInt(list.length) + (list.length === 1 ? ' route has' : ' routes have') + ' a lifetime' +
        (list.length > EXPIRING_MAX_ROWS ? '; the first ' + EXPIRING_MAX_ROWS + ' are shown.' : '.'));
  }

  // ---- watched routes

  function fmtTime(iso) { return iso ? String(iso).replace('T', ' ').replace('Z', ' UTC') : 'never'; }
  function watchTarget(w) {
    return (w.kind === 'lookup' ? 'lookup ' : '') + w.target +
      (w.table && w.table !== 'main' ? ' table ' + w.table : '');
  }
  function watchRow(w) {
    const r = w.present ? w.route : null;
    const state = el('span', { class: 'wstate' }, w.present ? 'present' : 'absent');
    const tr = el('tr', { class: w.present ? 'w-present' : 'w-absent', 'data-watch': w.name,
      'data-state': w.present ? 'present' : 'absent', title: w.spec },
    el('th', { scope: 'row' }, w.name),
    el('td', { class: 'addr' }, watchTarget(w)),
    el('td', {}, w.family === 'inet' ? 'IPv4' : 'IPv6'),
    el('td', {}, state),
    el('td', { class: 'addr' }, r ? r.dst : '\u2014'),
    r ? nhCell(r, 'gateway') : el('td', { class: 'addr' }, ''),
    r ? nhCell(r, 'dev') : el('td', {}, ''),
    el('td', {}, r ? r.table || 'main' : ''),
    el('td', {}, fmtTime(w.changed_at)),
    el('td', { class: 'num' }, fmtInt(w.changes || 0)));
    return tr;
  }
  // /watch, when /metrics said rtsnapd watches routes; the section is hidden otherwise.
  async function loadWatch() {
    const sec = $('watches');
    if (!st.watchCount) {
      sec.hidden = true;
      return;
    }
    const ep = st.epoch;
    let res;
    try {
      res = await fetchJSON('/watch');
    } catch (e) { return; }
    if (ep !== st.epoch) return; // another namespace chosen: its refresh draws it
    const all = res.ok && res.body && Array.isArray(res.body.watches) ? res.body.watches : null;
    if (!all || all.length === 0) {
      sec.hidden = true;
      return;
    }
    const list = all.filter((w) => (w.netns || '') === st.netns);
    const tbody = $('watch-table').tBodies[0];
    clear(tbody);
    const frag = document.createDocumentFragment();
    for (const w of list) frag.appendChild(watchRow(w));
    tbody.appendChild(frag);
    const absent = list.filter((w) => !w.present).length;
    $('watch-table').hidden = list.length === 0;
    $('watch-table').dataset.count = String(list.length);
    setText('watch-state', list.length === 0
      ? 'No watched route in this namespace (' + all.length + ' in others).'
      : fmtInt(list.length) + (list.length === 1 ? ' watched route' : ' watched routes') +
        (absent ? ': ' + absent + ' absent.' : ', all present.'));
    $('watch-state').classList.toggle('error', absent > 0);
    sec.hidden = false;
    st.watchSeq++;
    document.documentElement.dataset.watchNetns = st.netns;
    document.documentElement.dataset.watchSeq = String(st.watchSeq);
  }

  // ---- live: poll /healthz and /status (If-None-Match), refresh on a new generation

  async function refreshAll(withPage) {
    const gen = st.gen, fam = st.family, ep = st.epoch;
    await Promise.all([loadSummary().then(loadWatch), withPage === false ? null : loadPage(), loadExpiring()]);
    if (fam !== st.family || ep !== st.epoch) return; // switched meanwhile
    document.documentElement.dataset.renderedGen = String(gen); // every view shows gen (tests wait on it)
    document.documentElement.dataset.renderedFamily = fam;
    document.documentElement.dataset.renderedNetns = st.netns;
  }

  function liveText() {
    const t = new Date().toLocaleTimeString('en-GB');
    let s = st.stream ? 'Live: following changes, generation ' + st.gen
      : 'Live: checked ' + t + ', generation ' + st.gen + ' (polling every ' + POLL_MS / 1000 + ' s)';
    const c = st.lastChange;
    if (st.stream && c) {
      s += '; last change: generation ' + c.gen + ' at ' + c.at + ' (' +
        (c.added + c.removed === 0 ? 'no route of this view' : '+' + c.added + ' \u2212' + c.removed + ' routes of this view') + ')';
    }
    setText('live', s + '.');
    document.documentElement.dataset.stream = st.stream ? 'open' : 'polling';
  }

  // ---- live: the change stream; a refresh at most once a second

  function streamQuery() {
    const p = new URLSearchParams(st.page.qs);
    p.delete('limit');
    p.delete('after');
    return p.toString();
  }

  function openStream() {
    if (typeof EventSource === 'undefined') return;
    const qs = streamQuery();
    if (st.stream && st.streamQs === qs) return;
    if (st.stream) st.stream.close();
    const p = new URLSearchParams(qs);
    if (st.gen !== null) p.set('since', String(st.gen)); // nothing missed since the views were read
    const es = new EventSource(api('events?' + p.toString()));
    st.stream = es;
    st.streamQs = qs;
    const onChange = (ev, resync) => {
      if (es !== st.stream) return;
      let d = null;
      try { d = JSON.parse(ev.data); } catch (e) { return; }
      st.streamEvents++;
      document.documentElement.dataset.streamEvents = String(st.streamEvents);
      const touched = resync || (d.added && d.added.length) || (d.removed && d.removed.length);
      st.lastChange = { gen: d.generation, added: resync ? 0 : d.added.length, removed: resync ? 0 : d.removed.length,
        at: new Date().toLocaleTimeString('en-GB') };
      scheduleLive(!!touched);
    };
    es.onmessage = (ev) => onChange(ev, false);
    es.addEventListener('resync', (ev) => onChange(ev, true)); // re-read everything
    es.onopen = () => { if (es === st.stream) { liveText(); reschedulePoll(POLL_STREAM_MS); } };
    es.onerror = () => {
      if (es !== st.stream || es.readyState !== EventSource.CLOSED) return; // it reconnects by itself
      st.stream = null; // refused (a filter it does not take, no slot): poll, and try again later
      if (st.netns) loadNetns(); // or the namespace is gone
      liveText();
      reschedulePoll(POLL_MS);
      setTimeout(openStream, STREAM_RETRY_MS);
    };
  }

  function scheduleLive(page) {
    st.live.page = st.live.page || page;
    if (st.live.timer) return;
    const wait = Math.max(0, st.live.last + LIVE_MIN_MS - performance.now());
    st.live.timer = setTimeout(liveRefresh, wait);
  }

  async function liveRefresh() {
    const page = st.live.page, ep = st.epoch;
    st.live.page = false;
    st.live.last = performance.now();
    try {
      const res = await fetchJSON(api('status'));
      if (res.status === 200 && ep === st.epoch) {
        const fellBack = takeStatus(res);
        st.gen = famGen(st.status);
        st.reachable = true;
        renderHeader();
        await refreshAll(page || fellBack);
        sample();
      }
    } catch (e) { /* the poll reports it */ }
    st.live.timer = null;
    liveText();
    document.documentElement.dataset.gen = String(st.gen);
    if (st.live.page) scheduleLive(false);
  }

  function sample() {
    if (!st.status) return;
    const t = Date.now();
    for (const [fam, s] of [['inet6', st.status], ['inet', st.status.inet]]) {
      if (!s || (fam === 'inet6' && only4(st.status))) continue;
      const h = st.history[fam];
      h.push({ t: t, routes: s.routes });
      if (h.length > HISTORY_MAX) h.shift();
    }
    renderSpark();
  }

  // A /status body (200): keep it; IPv4 selected but no longer followed (rtsnapd restarted
  // without --family all, or a link to an IPv4 view): back to IPv6; IPv6 selected but IPv4
  // followed alone (--family inet): to IPv4 (true: the views must be read again).
  function takeStatus(res) {
    st.status = res.body;
    st.statusAt = performance.now();
    st.etag = res.headers.get('ETag');
    const want = only4(st.status) ? 'inet' : st.family === 'inet' && !st.status.inet ? 'inet6' : st.family;
    if (want !== st.family) {
      st.family = want;
      const p = new URLSearchParams(st.page.qs);
      if (want === 'inet') p.set('family', 'inet'); else p.delete('family');
      formFromFilter(p);
      st.page = { qs: p.toString(), after: '', back: [], next: '', routes: [] };
      if (location.hash.startsWith('#routes?')) history.replaceState(null, '', hashOf(p.toString()));
      st.gen = null; // refresh everything
      if (st.stream) openStream();
      return true;
    }
    return false;
  }

  function reschedulePoll(ms) {
    clearTimeout(st.pollTimer);
    st.pollTimer = setTimeout(poll, ms);
  }

  async function poll() {
    const ep = st.epoch;
    st.polls++;
    try {
      const h = await fetch(api('healthz'), { cache: 'no-store' });
      if (ep !== st.epoch) return; // another namespace chosen: its own poll goes on
      if (h.status === 404 && st.netns) { // the namespace is no longer served
        loadNetns();
        reschedulePoll(POLL_MS);
        return;
      }
      const stale = h.status !== 200;
      const force = !st.status || stale !== st.stale || !st.reachable || st.polls % FULL_STATUS_EVERY === 0;
      st.stale = stale;
      st.reachable = true;
      const res = await fetchJSON(api('status'), force || !st.etag ? {} : { 'If-None-Match': st.etag });
      if (ep !== st.epoch) return;
      if (res.status === 200) {
        takeStatus(res);
        // the ETag names both families' generations: refresh when the one shown moved
        const newGen = famGen(st.status) !== st.gen;
        st.gen = famGen(st.status);
        renderHeader();
        if (newGen) await refreshAll();
        else if (st.watchCount) await loadWatch(); // the other family moved: its watches may have
      } else if (res.status !== 304) {
        st.reachable = true;
        setText('live', 'rtsnapd: ' + errorText(res));
      }
      sample();
      liveText();
      document.documentElement.dataset.gen = String(st.gen);
    } catch (e) {
      if (ep !== st.epoch) return;
      if (st.reachable) { st.reachable = false; renderHeader(); }
      setText('live', 'rtsnapd did not answer at ' + new Date().toLocaleTimeString('en-GB') + '; retrying.');
    }
    reschedulePoll(st.stream ? POLL_STREAM_MS : POLL_MS);
  }

  async function start() {
    document.addEventListener('securitypolicyviolation', () => {
      st.violations++;
      document.documentElement.dataset.cspViolations = String(st.violations);
    });
    document.documentElement.dataset.cspViolations = '0';
    $('main').hidden = false;
    $('facts').hidden = false;
    $('live').hidden = false;
    $('filter').addEventListener('submit', (ev) => { ev.preventDefault(); go(filterFromForm()); });
    $('filter').addEventListener('reset', () => {
      setTimeout(() => {
        const p = new URLSearchParams();
        if (st.netns) p.set('netns', st.netns); // a filter cleared, in the same namespace
        p.set('limit', $('filter').elements.limit.value);
        go(p);
      }, 0);
    });
    $('page-next').addEventListener('click', () => {
      const pg = st.page;
      if (!pg.next) return;
      pg.back.push(pg.after);
      pg.after = pg.next;
      loadPage();
    });
    $('page-prev').addEventListener('click', () => {
      const pg = st.page;
      if (!pg.back.length) return;
      pg.after = pg.back.pop();
      loadPage();
    });
    $('page-first').addEventListener('click', () => {
      const pg = st.page;
      pg.back = [];
      pg.after = '';
      loadPage();
    });
    $('detail-close').addEventListener('click', closeDetail);
    $('lookup-form').addEventListener('submit', lookup);
    for (const r of document.querySelectorAll('#family input[name=family]')) r.addEventListener('change', onFamilySwitch);
    $('netns').addEventListener('change', onNetnsSwitch);
    window.addEventListener('hashchange', () => {
      const p = hashFilter();
      if (p) startBrowse(p);
    });
    setInterval(() => { renderAge(); tickCountdowns(); }, 1000);

    const about = (async () => {
      try {
        const a = await fetchJSON('/web/about.json');
        if (a.ok) st.about = a.body;
      } catch (e) { /* header keeps its dashes */ }
    })();
    await Promise.all([about, loadNetns()]);
    const p = hashFilter() || filterFromForm();
    const asked = p.get('netns') || '';
    st.netns = takeNetns(p);
    st.histories.set(st.netns, st.history);
    if (asked !== st.netns) history.replaceState(null, '', hashOf(p.toString()));
    renderNetns();
    renderAbout();
    setInterval(loadNetns, NETNS_POLL_MS);
    formFromFilter(p);
    st.page = { qs: p.toString(), after: '', back: [], next: '', routes: [] };
    st.family = p.get('family') === 'inet' ? 'inet' : 'inet6'; // the first /status may undo it
    await poll(); // first /status: renders everything (a new generation)
    // then follow the changes: a little later, so that whatever waits for the network to go
    // quiet before it looks at the page (--dump-dom with --virtual-time-budget, a crawler)
    // sees the page finished; the polls cover the first seconds
    setTimeout(openStream, STREAM_DELAY_MS);
    if (location.hash.startsWith('#routes')) $('routes').scrollIntoView();
    document.documentElement.dataset.readyMs = performance.now().toFixed(0); // since navigation (bench)
    document.documentElement.dataset.ready = '1';
  }

  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', start);
  else start();
})();

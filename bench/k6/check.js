// Same rows? Sends every query of queries.js to Grafton and a peer with the same
// variables (SEEDS seeded variable sets per query, plus the fixed set of
// bench/quick/run.sh for the seed queries), reduces both answers to the same
// plain rows and compares them. Exits 0 when all agree, 108 (test aborted)
// otherwise; prints one line per query and variable set.
//
//   k6 run -e GRAFTON_URL=http://127.0.0.1:8080/v1/graphql \
//          -e PEER_URL=http://127.0.0.1:5000/graphql [-e PEER=postgraphile|postgraphile5] \
//          [-e LIMIT=50] [-e SEEDS=3] bench/k6/check.js
// (POSTGRAPHILE_URL is the older name of PEER_URL.)
import http from 'k6/http';
import exec from 'k6/execution';
import { QUERIES } from './queries.js';

export const options = { vus: 1, iterations: 1, discardResponseBodies: false };

const GRAFTON_URL = __ENV.GRAFTON_URL;
const PEER = __ENV.PEER || 'postgraphile';
const PEER_URL = __ENV.PEER_URL || __ENV.POSTGRAPHILE_URL;
const LIMIT = Number(__ENV.LIMIT || 50);
const SEEDS = Number(__ENV.SEEDS || 3);
if (!GRAFTON_URL || !PEER_URL) throw new Error('set GRAFTON_URL and PEER_URL');
if (['postgraphile', 'postgraphile5'].indexOf(PEER) < 0) throw new Error('unknown PEER "' + PEER + '"');

/** mulberry32: a small seeded PRNG returning floats in [0, 1). */
function seeded(seed) {
  let a = seed >>> 0;
  return function () {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// The peers' shapes: v4 answers connections (`allVenues { nodes }`); v5 plain
// lists (`allVenuesList`) and `rowId` for a column called id.
const nodes = (x) => (Array.isArray(x) ? x : x.nodes);
const field = (o, name) => (o[name] !== undefined ? o[name] : o[name + 'List']);
const idOf = (o) => (o.rowId !== undefined ? o.rowId : o.id);
// v5 prints timestamps with microseconds ("…T18:00:00.000000"), Grafton and v4
// without a zero fraction: trailing zeros of a fraction are dropped before comparing.
const ts = (v) => (typeof v === 'string' ? v.replace(/(\.\d*?)0+$/, '$1').replace(/\.$/, '') : v);

const venueRow = (v) => [idOf(v), v.name, v.postal_code !== undefined ? v.postal_code : v.postalCode];
const memberRow = (m) => [idOf(m), m.first_name !== undefined ? m.first_name : m.firstName, m.email];
const rootsRows = (n) => ({
  grafton: (d) => { const o = []; for (let i = 1; i <= n; i++) o.push(d['r' + i].map(memberRow)); return o; },
  peer: (d) => { const o = []; for (let i = 1; i <= n; i++) o.push(nodes(d['r' + i]).map(memberRow)); return o; },
});

// For each query: the answer's `data` reduced to plain rows, per system.
const ROWS = {
  venues: {
    grafton: (d) => d.venues.map(venueRow),
    peer: (d) => nodes(field(d, 'allVenues')).map(venueRow),
  },
  venue_meetups: {
    grafton: (d) => d.venues.map((v) => venueRow(v).concat([v.meetups.map((m) => [m.id, m.title])])),
    peer: (d) => nodes(field(d, 'allVenues')).map((v) => venueRow(v).concat([nodes(field(v, 'meetupsByVenueId')).map((m) => [idOf(m), m.title])])),
  },
  meetups_members: {
    grafton: (d) => d.meetups.map((m) => [m.id, m.title, m.meetups_members.map((x) => [x.member.id, x.member.email])]),
    peer: (d) => nodes(field(d, 'allMeetups')).map((m) => [idOf(m), m.title,
      nodes(field(m, 'meetupsMembersByMeetupId')).map((x) => [idOf(x.memberByMemberId), x.memberByMemberId.email])]),
  },
  simple_list: {
    grafton: (d) => d.members.map(memberRow),
    peer: (d) => nodes(field(d, 'allMembers')).map(memberRow),
  },
  complex_filter: {
    grafton: (d) => d.meetups.map((m) => [m.id, m.title, ts(m.start_at), m.venue_id]),
    peer: (d) => nodes(field(d, 'allMeetups')).map((m) => [idOf(m), m.title, ts(m.startAt), m.venueId]),
  },
  aggregate: {
    grafton: (d) => [d.meetups_aggregate.aggregate.count, ts(d.meetups_aggregate.aggregate.max.start_at)],
    peer: (d) => [d.allMeetups.totalCount, d.allMeetups.nodes.length ? ts(d.allMeetups.nodes[0].startAt) : null],
  },
  by_pk: {
    grafton: (d) => (d.venues_by_pk ? venueRow(d.venues_by_pk) : null),
    peer: (d) => { const v = d.venueById !== undefined ? d.venueById : d.venueByRowId; return v ? venueRow(v) : null; },
  },
  meetups_venue: {
    grafton: (d) => d.meetups.map((m) => [m.id, m.title, m.venue_id, m.venue ? [m.venue.id, m.venue.name] : null]),
    peer: (d) => nodes(field(d, 'allMeetups')).map((m) => [idOf(m), m.title, m.venueId,
      m.venueByVenueId ? [idOf(m.venueByVenueId), m.venueByVenueId.name] : null]),
  },
  roots_1: rootsRows(1),
  roots_4: rootsRows(4),
  roots_9: rootsRows(9),
};

function ask(url, entry, variables) {
  const res = http.post(url, JSON.stringify({ query: entry.query, variables: variables }),
    { headers: { 'Content-Type': 'application/json' } });
  let body = null;
  try { body = JSON.parse(res.body); } catch (e) { /* reported below */ }
  return { status: res.status, body: body, raw: res.body, bytes: res.body ? res.body.length : 0 };
}

function size(name, rows) {
  if (rows === null) return 'no row';
  if (name === 'aggregate' || name === 'by_pk') return '1 row';
  if (name.indexOf('roots_') === 0) return rows.map((r) => r.length).join('+') + ' rows';
  return rows.length + ' rows';
}

export default function () {
  let failures = 0;
  for (const name of Object.keys(QUERIES)) {
    if (!ROWS[name]) { console.error('no row reducer for ' + name); failures++; continue; }
    const sets = [];
    for (let s = 1; s <= SEEDS; s++) sets.push(['seed ' + s, (lim, sys) => QUERIES[name][sys].variables(lim, seeded(1000 * s + 7))]);
    if (['venues', 'venue_meetups', 'meetups_members'].indexOf(name) >= 0) {
      // bench/quick/run.sh's fixed set.
      sets.push(['fixed', () => ({ limit: LIMIT, offset: 7, id_gt: 50345 })]);
    }
    for (const [label, vars] of sets) {
      const answers = {};
      let ok = true;
      let vg = null;
      for (const [sys, url] of [['grafton', GRAFTON_URL], [PEER, PEER_URL]]) {
        const v = vars(LIMIT, sys);
        if (sys === 'grafton') vg = v;
        else if (JSON.stringify(v) !== JSON.stringify(vg)) {
          console.error(name + ' ' + label + ': variables differ between systems: ' + JSON.stringify(vg) + ' vs ' + JSON.stringify(v));
          ok = false;
        }
        const a = ask(url, QUERIES[name][sys], v);
        if (a.status !== 200 || !a.body || a.body.errors || !a.body.data) {
          console.error(name + ' ' + label + ' ' + sys + ': status ' + a.status + ', body ' + String(a.raw).slice(0, 1000) +
            '\n  request: ' + JSON.stringify({ query: QUERIES[name][sys].query, variables: v }));
          ok = false;
          continue;
        }
        try {
          const side = sys === 'grafton' ? 'grafton' : 'peer';
          answers[side] = { rows: ROWS[name][side](a.body.data), bytes: a.bytes };
        } catch (e) {
          console.error(name + ' ' + label + ' ' + sys + ': unexpected shape (' + e + '): ' + String(a.raw).slice(0, 500));
          ok = false;
        }
      }
      if (ok && JSON.stringify(answers.grafton.rows) !== JSON.stringify(answers.peer.rows)) {
        console.error(name + ' ' + label + ': answers differ for ' + JSON.stringify(vg) +
          '\n  grafton:      ' + JSON.stringify(answers.grafton.rows).slice(0, 600) +
          '\n  ' + PEER + ': ' + JSON.stringify(answers.peer.rows).slice(0, 600));
        ok = false;
      }
      if (ok) {
        console.log('same ' + name + ' ' + label + ' ' + JSON.stringify(vg) + ': ' + size(name, answers.grafton.rows) +
          ', ' + answers.grafton.bytes + ' B grafton / ' + answers.peer.bytes + ' B ' + PEER);
      } else {
        failures++;
      }
    }
  }
  if (failures > 0) exec.test.abort(failures + ' check(s) failed');
  console.log('all queries agree');
}

export function handleSummary() {
  return {};
}

// The write benchmark's GraphQL documents, one entry per write name, each in
// three dialects: Grafton (Hasura's mutations: insert_<t>_one, insert_<t>,
// update_<t>_by_pk; the same names under --naming phrag), PostGraphile
// v4.14.1 (its default CRUD mutations: started WITHOUT
// --disable-default-mutations) and PostGraphile v5 (the same CRUD mutations,
// started with MUTATIONS=1; the key column is `rowId`).
//
//   MUTATIONS[name] = {
//     rows: rows written by one successful request,
//     grafton:       { query, variables(ctx), verify(data, vars) },
//     postgraphile:  { query, variables(ctx), verify(data, vars) },
//     postgraphile5: { query, variables(ctx), verify(data, vars) },
//   }
//
// `variables(ctx)` builds a fresh variables object: ctx = { tag, vu, iter,
// maxId, vus, rand }. `tag` names the run, `vu`/`iter` are k6's __VU/__ITER,
// so inserted names are unique per run, VU and iteration. `verify(data, vars)`
// returns null when the answer's `data` is the expected one, else a short
// reason (the caller has already checked the status and the absence of
// "errors"), so a failing write cannot count as a fast one.
//
// Both dialects of one write send the same logical values in the same order.

export const BATCH = 100;

/** The venue row written by insert number `k` of a request (snake_case, Grafton's column names). */
export function venueRow(ctx, k) {
  const key = ctx.tag + ' ' + ctx.vu + '-' + ctx.iter + (k === undefined ? '' : '-' + k);
  return {
    name: 'bench venue ' + key,
    postal_code: String(100 + (ctx.vu % 900)) + '-' + String(1000 + (ctx.iter % 9000)),
    prefecture: 'Tokyo',
    city: 'Bench City',
    street1: String(ctx.iter) + ' Load Street',
    street2: null,
    building: 'VU ' + ctx.vu,
  };
}

/** The same row with PostGraphile's (camelCase) field names. */
function camel(row) {
  return {
    name: row.name, postalCode: row.postal_code, prefecture: row.prefecture, city: row.city,
    street1: row.street1, street2: row.street2, building: row.building,
  };
}

/**
 * An existing venue id in [1, maxId], spread over the table and distinct per VU:
 * VU v (1-based) of n only touches ids ≡ v (mod n), so no two VUs ever update the
 * same row at the same time, and the rows a VU touches are random over the table.
 */
export function updateId(ctx) {
  const n = Math.max(1, Math.min(ctx.vus, ctx.maxId));
  const slot = (ctx.vu - 1) % n;
  const perVu = Math.floor((ctx.maxId - 1 - slot) / n) + 1; // ids slot+1, slot+1+n, … ≤ maxId
  return slot + 1 + n * Math.floor(ctx.rand() * perVu);
}

function updatedName(ctx) {
  return 'bench renamed ' + ctx.tag + ' ' + ctx.vu + '-' + ctx.iter;
}

const isId = (x) => Number.isInteger(x) && x > 0;

// ------------------------------------------------------------------ insert_one

const insert_one = {
  rows: 1,
  grafton: {
    query: 'mutation insertVenue($o: venues_insert_input!) { insert_venues_one(object: $o) { id } }',
    variables: (ctx) => ({ o: venueRow(ctx) }),
    verify: (d) => (d && d.insert_venues_one && isId(d.insert_venues_one.id) ? null
      : 'insert_venues_one.id missing'),
  },
  postgraphile: {
    query: 'mutation insertVenue($v: VenueInput!) { createVenue(input: { venue: $v }) { venue { id } } }',
    variables: (ctx) => ({ v: camel(venueRow(ctx)) }),
    verify: (d) => (d && d.createVenue && d.createVenue.venue && isId(d.createVenue.venue.id) ? null
      : 'createVenue.venue.id missing'),
  },
  // PostGraphile v5 (Amber): the same mutation; the key column is `rowId`.
  postgraphile5: {
    query: 'mutation insertVenue($v: VenueInput!) { createVenue(input: { venue: $v }) { venue { rowId } } }',
    variables: (ctx) => ({ v: camel(venueRow(ctx)) }),
    verify: (d) => (d && d.createVenue && d.createVenue.venue && isId(d.createVenue.venue.rowId) ? null
      : 'createVenue.venue.rowId missing'),
  },
};

// ------------------------------------------------------------------ insert_batch_100
// Grafton: one insert_venues with 100 objects (one multi-row INSERT).
// PostGraphile v4 has no multi-row insert: one request with 100 aliased
// createVenue fields (v0 … v99), one row per call, 100 calls in one request.

function batchDocument(key) {
  const params = [];
  const fields = [];
  for (let k = 0; k < BATCH; k++) {
    params.push('$v' + k + ': VenueInput!');
    fields.push('v' + k + ': createVenue(input: { venue: $v' + k + ' }) { venue { ' + key + ' } }');
  }
  return 'mutation insertVenues(' + params.join(', ') + ') { ' + fields.join(' ') + ' }';
}

const insert_batch_100 = {
  rows: BATCH,
  grafton: {
    query: 'mutation insertVenues($os: [venues_insert_input!]!) { insert_venues(objects: $os) { affected_rows } }',
    variables: (ctx) => {
      const os = [];
      for (let k = 0; k < BATCH; k++) os.push(venueRow(ctx, k));
      return { os: os };
    },
    verify: (d) => (d && d.insert_venues && d.insert_venues.affected_rows === BATCH ? null
      : 'insert_venues.affected_rows is ' + (d && d.insert_venues ? d.insert_venues.affected_rows : 'missing') +
        ', not ' + BATCH),
  },
  postgraphile: aliasedCreates('id'),
  postgraphile5: aliasedCreates('rowId'),
};

/** PostGraphile's batch: 100 aliased createVenue calls, checked by the key each returns. */
function aliasedCreates(key) {
  return {
    query: batchDocument(key),
    variables: (ctx) => {
      const v = {};
      for (let k = 0; k < BATCH; k++) v['v' + k] = camel(venueRow(ctx, k));
      return v;
    },
    verify: (d) => {
      if (!d) return 'no data';
      const ids = {};
      for (let k = 0; k < BATCH; k++) {
        const f = d['v' + k];
        if (!f || !f.venue || !isId(f.venue[key])) return 'v' + k + '.venue.' + key + ' missing';
        ids[f.venue[key]] = true;
      }
      return Object.keys(ids).length === BATCH ? null : 'fewer than ' + BATCH + ' distinct ids';
    },
  };
}

// ------------------------------------------------------------------ update_by_pk

const update_by_pk = {
  rows: 1,
  grafton: {
    query: 'mutation updateVenue($id: Int!, $s: venues_set_input) { update_venues_by_pk(pk_columns: { id: $id }, _set: $s) { id name } }',
    variables: (ctx) => ({ id: updateId(ctx), s: { name: updatedName(ctx) } }),
    verify: (d, vars) => {
      const r = d && d.update_venues_by_pk;
      if (!r) return 'update_venues_by_pk is null (no row ' + vars.id + '?)';
      return r.id === vars.id && r.name === vars.s.name ? null : 'update_venues_by_pk returned another row or name';
    },
  },
  postgraphile: {
    query: 'mutation updateVenue($id: Int!, $patch: VenuePatch!) { updateVenueById(input: { id: $id, venuePatch: $patch }) { venue { id name } } }',
    variables: (ctx) => ({ id: updateId(ctx), patch: { name: updatedName(ctx) } }),
    verify: (d, vars) => {
      const r = d && d.updateVenueById && d.updateVenueById.venue;
      if (!r) return 'updateVenueById.venue is null (no row ' + vars.id + '?)';
      return r.id === vars.id && r.name === vars.patch.name ? null : 'updateVenueById returned another row or name';
    },
  },
  postgraphile5: {
    query: 'mutation updateVenue($id: Int!, $patch: VenuePatch!) { updateVenueByRowId(input: { rowId: $id, venuePatch: $patch }) { venue { rowId name } } }',
    variables: (ctx) => ({ id: updateId(ctx), patch: { name: updatedName(ctx) } }),
    verify: (d, vars) => {
      const r = d && d.updateVenueByRowId && d.updateVenueByRowId.venue;
      if (!r) return 'updateVenueByRowId.venue is null (no row ' + vars.id + '?)';
      return r.rowId === vars.id && r.name === vars.patch.name ? null : 'updateVenueByRowId returned another row or name';
    },
  },
};

export const MUTATIONS = { insert_one, insert_batch_100, update_by_pk };
export const SYSTEMS = ['grafton', 'postgraphile', 'postgraphile5'];

/** The entry for (system, name) plus its rows per request; throws with the valid choices otherwise. */
export function lookupWrite(system, name) {
  if (SYSTEMS.indexOf(system) < 0) throw new Error('unknown SYSTEM "' + system + '" (one of ' + SYSTEMS.join(', ') + ')');
  const w = MUTATIONS[name];
  if (!w) throw new Error('unknown WRITE "' + name + '" (one of ' + Object.keys(MUTATIONS).join(', ') + ')');
  return { query: w[system].query, variables: w[system].variables, verify: w[system].verify, rows: w.rows };
}

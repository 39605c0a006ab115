// The benchmark's GraphQL documents, one entry per query name, each in three
// dialects: Grafton (started with `--naming phrag`), PostGraphile v4.14.1 +
// postgraphile-plugin-connection-filter 2.3.0, and PostGraphile v5.1.5 (Amber
// preset + connection-filter 4.0.1, bench/peers/postgraphile5).
//
//   QUERIES[name] = {
//     grafton:       { query, variables(limit, rand) },
//     postgraphile:  { query, variables(limit, rand) },
//     postgraphile5: { query, variables(limit, rand) },
//   }
//
// PostGraphile v5 (Amber) names a column called `id` `rowId` (`id` is the Relay
// node id), so its orders are ROW_ID_ASC/DESC and its key lookup venueByRowId;
// its documents use the plain-list fields (allVenuesList, …), its fastest form
// and the closest to Grafton's lists, except `aggregate`, which needs the
// connection's totalCount.
//
// `variables(limit, rand)` returns the request's variables. `limit` is the
// page size of the seed queries (LIMIT, default 50); `rand` is a function
// returning a float in [0, 1) and defaults to Math.random (k6's), so a checker
// can pass a seeded generator and get the same variables for both systems.
// Both dialects of one query draw the same random numbers in the same order,
// so the same `rand` sequence gives the same logical request.
//
// Randomised per request, as in the seed documents: `id_gt` uniform in
// [0, 100000), `offset` uniform in [0, 50), primary keys uniform in
// [1, 100000].
//
// Translation rules (see README.md): Grafton orders a paginated list without
// an explicit sort by its primary key, so PostGraphile gets
// `orderBy: PRIMARY_KEY_ASC` (or ID_ASC) there; PostGraphile v4 appends the
// primary key (ascending) to any non-unique orderBy, so Grafton gets `id: asc`
// as the last sort key where an explicit sort is used. PostGraphile v4 has no
// aggregates without a plugin: `aggregate` uses `totalCount` plus the first
// node ordered by START_AT_DESC, the closest equivalent.

const MAX_ID = 100000;
const MAX_OFFSET = 50;

/** Uniform integer in [lo, hi) from rand(). */
function randInt(rand, lo, hi) {
  return lo + Math.floor(rand() * (hi - lo));
}

/** The seed's variables: limit fixed, offset in [0, 50), id_gt in [0, 100000). */
function seedVariables(limit, rand) {
  const r = rand || Math.random;
  return { limit: limit, offset: randInt(r, 0, MAX_OFFSET), id_gt: randInt(r, 0, MAX_ID) };
}

function same(query, variables) {
  return { query: query, variables: variables };
}

// ------------------------------------------------------------------ seed queries
// Grafton: verbatim phrag from bench/quick/post.lua's driver (bench/quick/run.sh);
// PostGraphile: the translations run.sh verifies to return the same rows.

const venues = {
  grafton: same(
    'query queryVenues($limit: Int!, $offset: Int!, $id_gt: Int!) { venues(limit: $limit, offset: $offset, where: { id: { gt: $id_gt } }) { id name postal_code } }',
    seedVariables),
  postgraphile: same(
    'query queryVenues($limit: Int!, $offset: Int!, $id_gt: Int!) { allVenues(first: $limit, offset: $offset, filter: { id: { greaterThan: $id_gt } }, orderBy: ID_ASC) { nodes { id name postalCode } } }',
    seedVariables),
  postgraphile5: same(
    'query queryVenues($limit: Int!, $offset: Int!, $id_gt: Int!) { allVenuesList(first: $limit, offset: $offset, filter: { rowId: { greaterThan: $id_gt } }, orderBy: ROW_ID_ASC) { rowId name postalCode } }',
    seedVariables),
};

const venue_meetups = {
  grafton: same(
    'query queryVenueMeetups($limit: Int!, $offset: Int!, $id_gt: Int!) { venues(limit: $limit, offset: $offset, where: { id: { gt: $id_gt } }) { id name postal_code meetups(limit: $limit, sort: { id: desc }) { id title } } }',
    seedVariables),
  postgraphile: same(
    'query queryVenueMeetups($limit: Int!, $offset: Int!, $id_gt: Int!) { allVenues(first: $limit, offset: $offset, filter: { id: { greaterThan: $id_gt } }, orderBy: ID_ASC) { nodes { id name postalCode meetupsByVenueId(first: $limit, orderBy: ID_DESC) { nodes { id title } } } } }',
    seedVariables),
  postgraphile5: same(
    'query queryVenueMeetups($limit: Int!, $offset: Int!, $id_gt: Int!) { allVenuesList(first: $limit, offset: $offset, filter: { rowId: { greaterThan: $id_gt } }, orderBy: ROW_ID_ASC) { rowId name postalCode meetupsByVenueIdList(first: $limit, orderBy: ROW_ID_DESC) { rowId title } } }',
    seedVariables),
};

const meetups_members = {
  grafton: same(
    'query queryMeetupsWithMembers($limit: Int!, $offset: Int!, $id_gt: Int!) { meetups(limit: $limit, offset: $offset, where: { id: { gt: $id_gt } }) { id title meetups_members(limit: $limit) { member { id email } } } }',
    seedVariables),
  postgraphile: same(
    'query queryMeetupsWithMembers($limit: Int!, $offset: Int!, $id_gt: Int!) { allMeetups(first: $limit, offset: $offset, filter: { id: { greaterThan: $id_gt } }, orderBy: ID_ASC) { nodes { id title meetupsMembersByMeetupId(first: $limit, orderBy: PRIMARY_KEY_ASC) { nodes { memberByMemberId { id email } } } } } }',
    seedVariables),
  postgraphile5: same(
    'query queryMeetupsWithMembers($limit: Int!, $offset: Int!, $id_gt: Int!) { allMeetupsList(first: $limit, offset: $offset, filter: { rowId: { greaterThan: $id_gt } }, orderBy: ROW_ID_ASC) { rowId title meetupsMembersByMeetupIdList(first: $limit, orderBy: PRIMARY_KEY_ASC) { memberByMemberId { rowId email } } } }',
    seedVariables),
};

// ------------------------------------------------------------------ more shapes

// The auth scenario's query (bench/lib/auth.py): a page of meetups with one
// object nest (its venue), the seed's variables. Run as admin and as a role
// whose permission filters meetups through `venue`.
const meetups_venue = {
  grafton: same(
    'query queryMeetupsVenue($limit: Int!, $offset: Int!, $id_gt: Int!) { meetups(limit: $limit, offset: $offset, where: { id: { gt: $id_gt } }) { id title venue_id venue { id name } } }',
    seedVariables),
  postgraphile: same(
    'query queryMeetupsVenue($limit: Int!, $offset: Int!, $id_gt: Int!) { allMeetups(first: $limit, offset: $offset, filter: { id: { greaterThan: $id_gt } }, orderBy: ID_ASC) { nodes { id title venueId venueByVenueId { id name } } } }',
    seedVariables),
  postgraphile5: same(
    'query queryMeetupsVenue($limit: Int!, $offset: Int!, $id_gt: Int!) { allMeetupsList(first: $limit, offset: $offset, filter: { rowId: { greaterThan: $id_gt } }, orderBy: ROW_ID_ASC) { rowId title venueId venueByVenueId { rowId name } } }',
    seedVariables),
};

// A short list of ten members at a random offset (ordered by primary key).
function offsetOnly(limit, rand) {
  return { offset: randInt(rand || Math.random, 0, MAX_OFFSET) };
}
const simple_list = {
  grafton: same(
    'query simpleList($offset: Int!) { members(limit: 10, offset: $offset) { id first_name email } }',
    offsetOnly),
  postgraphile: same(
    'query simpleList($offset: Int!) { allMembers(first: 10, offset: $offset, orderBy: PRIMARY_KEY_ASC) { nodes { id firstName email } } }',
    offsetOnly),
  postgraphile5: same(
    'query simpleList($offset: Int!) { allMembersList(first: 10, offset: $offset, orderBy: PRIMARY_KEY_ASC) { rowId firstName email } }',
    offsetOnly),
};

// Three ANDed conditions, an explicit sort on an unindexed column, 100 rows.
// (`limit` is fixed at 100 here, independent of LIMIT.) The `id: asc`
// tie-break is what PostGraphile adds on its own to START_AT_DESC.
function idGtOnly(limit, rand) {
  return { id_gt: randInt(rand || Math.random, 0, MAX_ID) };
}
const complex_filter = {
  grafton: same(
    'query complexFilter($id_gt: Int!) { meetups(limit: 100, sort: [{ start_at: desc }, { id: asc }], where: { and: [{ id: { gt: $id_gt } }, { title: { like: "%a%" } }, { venue_id: { lt: 90000 } }] }) { id title start_at venue_id } }',
    idGtOnly),
  postgraphile: same(
    'query complexFilter($id_gt: Int!) { allMeetups(first: 100, orderBy: [START_AT_DESC, ID_ASC], filter: { and: [{ id: { greaterThan: $id_gt } }, { title: { like: "%a%" } }, { venueId: { lessThan: 90000 } }] }) { nodes { id title startAt venueId } } }',
    idGtOnly),
  postgraphile5: same(
    'query complexFilter($id_gt: Int!) { allMeetupsList(first: 100, orderBy: [START_AT_DESC, ROW_ID_ASC], filter: { and: [{ rowId: { greaterThan: $id_gt } }, { title: { like: "%a%" } }, { venueId: { lessThan: 90000 } }] }) { rowId title startAt venueId } }',
    idGtOnly),
};

// Count and max over a bounded id range (id_gt, id_gt + 1000].
function idRange(limit, rand) {
  const idGt = randInt(rand || Math.random, 0, MAX_ID);
  return { id_gt: idGt, id_lte: idGt + 1000 };
}
const aggregate = {
  grafton: same(
    'query aggregateMeetups($id_gt: Int!, $id_lte: Int!) { meetups_aggregate(where: { id: { gt: $id_gt, lte: $id_lte } }) { aggregate { count max { start_at } } } }',
    idRange),
  // PostGraphile v4 has no aggregates without a plugin: totalCount counts the
  // whole filtered set (ignoring `first`), the single node ordered by
  // START_AT_DESC carries the maximum.
  postgraphile: same(
    'query aggregateMeetups($id_gt: Int!, $id_lte: Int!) { allMeetups(first: 1, orderBy: [START_AT_DESC, ID_ASC], filter: { id: { greaterThan: $id_gt, lessThanOrEqualTo: $id_lte } }) { totalCount nodes { startAt } } }',
    idRange),
  postgraphile5: same(
    'query aggregateMeetups($id_gt: Int!, $id_lte: Int!) { allMeetups(first: 1, orderBy: [START_AT_DESC, ROW_ID_ASC], filter: { rowId: { greaterThan: $id_gt, lessThanOrEqualTo: $id_lte } }) { totalCount nodes { startAt } } }',
    idRange),
};

// Fetch one venue by primary key, id uniform in [1, 100000].
function pk(limit, rand) {
  return { id: randInt(rand || Math.random, 1, MAX_ID + 1) };
}
const by_pk = {
  grafton: same('query venueByPk($id: Int!) { venues_by_pk(id: $id) { id name postal_code } }', pk),
  postgraphile: same('query venueByPk($id: Int!) { venueById(id: $id) { id name postalCode } }', pk),
  postgraphile5: same('query venueByPk($id: Int!) { venueByRowId(rowId: $id) { rowId name postalCode } }', pk),
};

// Documents with n root fields (WSO2-style operation counts): each root is a
// small list `members(limit: 5, where: {id: {gt: $id_gt_i}})` with its own
// random id_gt_i in [0, 100000).
function rootsQuery(n, system) {
  const decls = [];
  const fields = [];
  for (let i = 1; i <= n; i++) {
    decls.push('$id_gt_' + i + ': Int!');
    if (system === 'grafton') {
      fields.push('r' + i + ': members(limit: 5, where: { id: { gt: $id_gt_' + i + ' } }) { id first_name email }');
    } else if (system === 'postgraphile5') {
      fields.push('r' + i + ': allMembersList(first: 5, filter: { rowId: { greaterThan: $id_gt_' + i + ' } }, orderBy: PRIMARY_KEY_ASC) { rowId firstName email }');
    } else {
      fields.push('r' + i + ': allMembers(first: 5, filter: { id: { greaterThan: $id_gt_' + i + ' } }, orderBy: PRIMARY_KEY_ASC) { nodes { id firstName email } }');
    }
  }
  return 'query roots' + n + '(' + decls.join(', ') + ') { ' + fields.join(' ') + ' }';
}
function rootsVariables(n) {
  return function (limit, rand) {
    const r = rand || Math.random;
    const v = {};
    for (let i = 1; i <= n; i++) v['id_gt_' + i] = randInt(r, 0, MAX_ID);
    return v;
  };
}
function roots(n) {
  return {
    grafton: same(rootsQuery(n, 'grafton'), rootsVariables(n)),
    postgraphile: same(rootsQuery(n, 'postgraphile'), rootsVariables(n)),
    postgraphile5: same(rootsQuery(n, 'postgraphile5'), rootsVariables(n)),
  };
}

export const QUERIES = {
  venues: venues,
  venue_meetups: venue_meetups,
  meetups_members: meetups_members,
  simple_list: simple_list,
  complex_filter: complex_filter,
  aggregate: aggregate,
  by_pk: by_pk,
  roots_1: roots(1),
  roots_4: roots(4),
  roots_9: roots(9),
  meetups_venue: meetups_venue,
};

export const SYSTEMS = ['grafton', 'postgraphile', 'postgraphile5'];

/**
 * The entry for (system, query name), or an exception naming what exists.
 * Used by closed.js and capacity.js to validate SYSTEM and QUERY up front.
 */
export function lookup(system, name) {
  const q = QUERIES[name];
  if (!q) throw new Error('unknown QUERY "' + name + '"; known: ' + Object.keys(QUERIES).join(', '));
  if (SYSTEMS.indexOf(system) < 0) throw new Error('unknown SYSTEM "' + system + '"; known: ' + SYSTEMS.join(', '));
  return q[system];
}

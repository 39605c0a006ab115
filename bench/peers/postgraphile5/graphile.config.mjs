// PostGraphile v5 as bench/run's peer (the demo's meetup schema), in its
// recommended form: the Amber preset plus the v5 connection-filter plugin.
// bench/lib/run_setup.py starts it as one process on the pinned Node 22:
//
//   DATABASE_URL=postgres://… PG_POOL_MAX=20 PORT=5000 [MUTATIONS=1] \
//     node_modules/.bin/node node_modules/postgraphile/dist/cli-run.js -C graphile.config.mjs
//
// Node ≥ 22 is required: on Node 20 every list query fails with "Cannot read
// properties of undefined (reading 'items')" (Promise.withResolvers is missing).
// The connection stays here, not on the command line: `-c` rebuilds the pg
// service without this file's poolConfig (the pool falls back to pg's 10).
import { PostGraphileAmberPreset } from "postgraphile/presets/amber";
import { makePgService } from "postgraphile/adaptors/pg";
import { PostGraphileConnectionFilterPreset } from "postgraphile-plugin-connection-filter";

const connectionString = process.env.DATABASE_URL;
if (!connectionString) throw new Error("set DATABASE_URL");
const mutations = process.env.MUTATIONS === "1";

/** @type {GraphileConfig.Preset} */
const preset = {
  extends: [PostGraphileAmberPreset, PostGraphileConnectionFilterPreset],
  disablePlugins: [
    // As v4's default (ignoreIndexes): every column can be filtered and ordered
    // by, not only indexed ones (complex_filter sorts by start_at).
    "PgIndexBehaviorsPlugin",
    // Reads only, as v4's --disable-default-mutations (the writes start a
    // second instance with MUTATIONS=1).
    ...(mutations ? [] : ["PgMutationCreatePlugin", "PgMutationUpdateDeletePlugin"]),
  ],
  pgServices: [
    makePgService({
      connectionString,
      schemas: ["public"],
      poolConfig: { max: Number(process.env.PG_POOL_MAX || 10) },
      pubsub: false, // no LISTEN client: no subscriptions are measured on v5
    }),
  ],
  grafserv: {
    port: Number(process.env.PORT || 5000),
    host: "127.0.0.1",
    graphqlPath: "/graphql",
    graphiql: false,
    graphiqlOnGraphQLGET: false,
    graphqlOverGET: false,
    watch: false,
    websockets: false,
  },
  grafast: { explain: false },
  schema: {
    // Plain lists (allVenuesList, meetupsByVenueIdList, …) beside the Relay
    // connections: the closest match to Grafton's lists, and v5's faster form.
    defaultBehavior: "connection resource:connection list resource:list",
    pgForbidSetofFunctionsToReturnNull: true,
    jsonScalarAsString: false,
  },
};
export default preset;

// A GraphQL server Grafton cannot produce (a custom scalar, an interface, a
// union, field arguments with defaults, an enum, an input object), served with
// graphql-js and graphql-http on 127.0.0.1, as a remote schema for Grafton's
// tests. It prints `listening <port>` once ready, and answers `calls` with the
// number of requests it got (the tests count calls through it).
import http from 'node:http';
import { createHandler } from 'graphql-http/lib/use/http';
import { buildSchema } from 'graphql';

const schema = buildSchema(`
  "Money in cents, as a JSON number"
  scalar Money
  interface Node { id: ID! }
  enum Kind { NOVEL ESSAY }
  type Author implements Node {
    id: ID!
    name: String!
    "Its place in the list (an Int, for relationships that take one)"
    number: Int!
    books(first: Int = 10): [Book!]!
  }
  type Book implements Node {
    id: ID!
    title: String!
    price: Money
    kind: Kind!
    author: Author!
  }
  union SearchResult = Author | Book
  input SearchInput { text: String!, kinds: [Kind!] }
  type Query {
    node(id: ID!): Node
    search(input: SearchInput!): [SearchResult!]!
    echo(text: String = "hi"): String
    "The x-hasura-user-id header it was sent"
    whoami: String
    calls: Int!
    "Each id's author (one call for many rows)"
    authors(ids: [ID!]!): [Author]!
    "The author of this id (one made up for an id it does not know)"
    author(id: ID!): Author
  }
  type Mutation { addBook(title: String!): Book! }
`);

const authors = [
  { id: '1', name: 'Ada', number: 1 },
  { id: '2', name: 'Grace', number: 2 },
];
const books = [
  { id: 'b1', title: 'Engines', price: 1250, kind: 'ESSAY', author: '1' },
  { id: 'b2', title: 'Compilers', price: 2999, kind: 'NOVEL', author: '2' },
];
let calls = 0;

const withType = (o, t) => ({ ...o, __typename: t });
const author = (a) => a && withType({
  ...a,
  books: ({ first }) => books.filter((b) => b.author === a.id).slice(0, first).map(book),
}, 'Author');
const book = (b) => b && withType({ ...b, author: () => author(authors.find((a) => a.id === b.author)) }, 'Book');

const rootValue = (headers) => ({
  node: ({ id }) => author(authors.find((a) => a.id === id)) || book(books.find((b) => b.id === id)),
  search: ({ input }) => [
    ...authors.filter((a) => a.name.includes(input.text)).map(author),
    ...books.filter((b) => b.title.includes(input.text) && (!input.kinds || input.kinds.includes(b.kind))).map(book),
  ],
  echo: ({ text }) => text,
  whoami: () => headers['x-hasura-user-id'] ?? null,
  calls: () => calls,
  authors: ({ ids }) => ids.map((id) => author(authors.find((a) => a.id === id)) ?? null),
  author: ({ id }) => author(authors.find((a) => a.id === id) ?? { id, name: `Author ${id}`, number: 0 }),
  addBook: ({ title }) => {
    const b = { id: `b${books.length + 1}`, title, price: null, kind: 'NOVEL', author: '1' };
    books.push(b);
    return book(b);
  },
});

// DELAY_MS: each answer waits that long (a slow remote, for the benchmark).
const delay = Number(process.env.DELAY_MS || 0);
const server = http.createServer((req, res) => {
  calls += 1;
  const handler = createHandler({
    schema,
    rootValue: rootValue(req.headers),
    // Abstract types are resolved by the objects' own `__typename`.
  });
  if (delay > 0) setTimeout(() => handler(req, res), delay);
  else handler(req, res);
});
server.keepAliveTimeout = 60000;
server.listen(0, '127.0.0.1', () => {
  console.log(`listening ${server.address().port}`);
});

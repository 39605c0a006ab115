//! The schema a Hasura project's extras produce, as a snapshot: a tracked function,
//! computed fields (scalar with arguments, set-returning) and an inherited role
//! whose redacted columns turn nullable, as the `member` role sees them.

use grafton_server::ServeOptions;

const FIXTURE: &str = "
CREATE TABLE authors (id INTEGER NOT NULL PRIMARY KEY, name TEXT NOT NULL, team TEXT NOT NULL);
CREATE TABLE posts (id INTEGER NOT NULL PRIMARY KEY,
                    author_id INTEGER NOT NULL REFERENCES authors (id), title TEXT NOT NULL);
CREATE FUNCTION search_posts(search text, lim integer DEFAULT 10) RETURNS SETOF posts
  STABLE LANGUAGE sql AS $$ SELECT * FROM posts WHERE title ILIKE search LIMIT lim $$;
COMMENT ON FUNCTION search_posts(text, integer) IS 'Posts whose title matches';
CREATE FUNCTION author_post_count(a authors) RETURNS bigint STABLE LANGUAGE sql
  AS $$ SELECT count(*) FROM posts WHERE author_id = a.id $$;
CREATE FUNCTION author_posts_like(a authors, search text) RETURNS SETOF posts STABLE
  LANGUAGE sql AS $$ SELECT * FROM posts WHERE author_id = a.id AND title ILIKE search $$;
";

const CONFIG: &str = r#"
functions:
  search_posts: {}
inherited_roles:
  member: [user, team]
tables:
  authors:
    computed_fields:
      post_count: {function: author_post_count}
      posts_like: {function: author_posts_like}
    permissions:
      user:
        select: {columns: [id, name], computed_fields: [post_count], filter: {id: {_eq: X-Hasura-User-Id}}}
      team:
        select: {columns: [id, team], computed_fields: [post_count], filter: {team: {_eq: eng}},
                 allow_aggregations: true}
  posts:
    permissions:
      user:
        select: {columns: [id, title], filter: {}}
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_member_roles_schema() {
    let url = grafton_testkit::fresh_database("breadth_snapshot");
    grafton_testkit::psql(&url, FIXTURE.as_bytes());
    let options = ServeOptions {
        database_url: url,
        config: serde_norway::from_str(CONFIG).expect("config"),
        ..ServeOptions::default()
    };
    let engine = grafton_server::build_engine(&options)
        .await
        .expect("engine");
    let planner = engine.planner_for(Some("member"), false).expect("member");
    insta::assert_snapshot!(planner.model().sdl);
}

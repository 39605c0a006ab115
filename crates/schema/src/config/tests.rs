//! The config file's parsing.

use super::RootFieldAffixes;

#[test]
fn root_field_affixes_join_as_hasura_joins_them() {
    let both = RootFieldAffixes {
        prefix: Some("shop_".into()),
        suffix: Some("_v1".into()),
    };
    assert_eq!(both.apply("posts_by_pk", false), "shop_posts_by_pk_v1");
    assert_eq!(both.apply("postsByPk", true), "shop_PostsByPk_v1");
    let suffix = RootFieldAffixes {
        prefix: None,
        suffix: Some("v2".into()),
    };
    assert_eq!(suffix.apply("postsByPk", true), "postsByPkV2");
    assert_eq!(suffix.apply("posts", false), "postsv2");
    assert_eq!(RootFieldAffixes::default().apply("posts", true), "posts");
}

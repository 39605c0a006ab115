//! Automatic persisted queries (Apollo's APQ): a hash stands for a document this
//! instance, or with Redis any instance, was sent with it.

use super::types::PersistedError;
use super::GraphqlRequest;
use crate::engine::Engine;
use std::sync::Arc;

impl Engine {
    /// Step 4, the request's document: its text, or for a persisted query (Apollo's
    /// APQ) the text stored under its hash (here, else in the shared store), which a
    /// request with both registers.
    pub(super) async fn persisted(
        &self,
        req: &GraphqlRequest,
    ) -> Result<Option<GraphqlRequest>, PersistedError> {
        let Some(hash) = &req.persisted_hash else {
            return Ok(None);
        };
        let hash = hash.to_ascii_lowercase();
        if !req.query.is_empty() {
            if crate::trusted::sha256_hex(&req.query) != hash {
                return Err(PersistedError::Mismatch);
            }
            if self.documents.get(&hash).is_none() {
                if let Some(shared) = &self.shared {
                    shared.put_document(&hash, &req.query).await;
                }
                self.documents.put(hash, req.query.as_str().into());
            }
            return Ok(None);
        }
        let document = match self.documents.get(&hash) {
            Some(document) => document,
            None => {
                let shared = match &self.shared {
                    Some(shared) => shared.document(&hash).await,
                    None => None,
                };
                // Whoever can write to Redis must not choose what a hash runs.
                let document: Arc<str> = shared
                    .filter(|d| crate::trusted::sha256_hex(d) == hash)
                    .ok_or(PersistedError::NotFound)?
                    .into();
                self.documents.put(hash, document.clone());
                document
            }
        };
        Ok(Some(GraphqlRequest {
            query: document.to_string(),
            operation_name: req.operation_name.clone(),
            variables: req.variables.clone(),
            persisted_hash: None,
        }))
    }
}

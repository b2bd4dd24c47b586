"""GCS (seed 004): reader-writer locks folded into MIND's switch-directory
coherence on disaggregated memory."""

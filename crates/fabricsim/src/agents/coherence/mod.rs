//! Directory coherence (MSI, MESI) and German's protocol.

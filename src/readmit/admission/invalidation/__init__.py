"""Stage 2, resolve invalidation: explicit links, implicit (scanner + verifier), premises."""

"""Text: tokenization, exact token counts, detokenizer, sentence rules, context units, chunks, answer normalisation."""

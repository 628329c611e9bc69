"""A checkpoint for serving: a clean Hugging Face folder, a GGUF file, and its model card."""

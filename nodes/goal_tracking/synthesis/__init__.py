"""ATOD's synthetic dialogue pipeline (paper 000, §4): sampling, annotation, generation, labels."""

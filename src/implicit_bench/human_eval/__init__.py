"""Human evaluation: rating bundles and forms, their import, rater agreement."""

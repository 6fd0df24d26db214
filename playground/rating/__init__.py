"""Human ratings: the store of ratings and questionnaires, and rating plans."""

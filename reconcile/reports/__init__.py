"""The finance and morning reports (HTML), their charts."""

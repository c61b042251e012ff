// Reached only through /common/redirect.py, on the cross-site HTTPS origin.
window.redirected = true;

# Generated from package.json by python/version-from-npm.mjs (npm version runs it): do not edit.
__version__ = "0.2.0"

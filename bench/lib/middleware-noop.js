// A handler module that adds one no-op middleware to its peer (bench/request-path/middleware.js).
export const middleware = [(ctx, next) => next()]

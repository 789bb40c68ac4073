// The reference page's only configuration (a file, not an inline script: the page's Content-Security-Policy forbids those).
window.ui = SwaggerUIBundle({
  url: '/api/v1/openapi.json',
  dom_id: '#swagger-ui',
  deepLinking: true,
  docExpansion: 'list',
  defaultModelsExpandDepth: 1,
  defaultModelExpandDepth: 2,
  defaultModelRendering: 'model', // the schema with its field descriptions first, the example one click away
  displayRequestDuration: true,
  validatorUrl: null, // the default sends the document's URL to validator.swagger.io for a badge
  queryConfigEnabled: false, // a ?url= in the page's address must not load another document
});

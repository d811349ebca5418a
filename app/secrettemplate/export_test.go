package secrettemplate

// SourceErrorForTest exposes sourceError to the external tests, which judge
// its errors with the outcomes table (which imports this package).
var SourceErrorForTest = sourceError

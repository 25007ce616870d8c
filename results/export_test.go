package results

// SitePathsForTest lets the external tests reach sitePaths.
var SitePathsForTest = sitePaths

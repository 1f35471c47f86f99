package api

// The private-provider registry, /v1/private-providers/..., speaks Huawei RFS's wire format
// (snake_case fields, RFSError bodies) rather than the rest of this package's, so that RFS
// clients work unchanged. See docs/private-providers.md.

// ClientRequestIDHeader is the header every /v1/private-providers request must carry.
const ClientRequestIDHeader = "Client-Request-Id"

// PrivateProviderSourcePrefix is the source address of a private provider without its name.
const PrivateProviderSourcePrefix = "huawei.com/private-provider/"

// CreatePrivateProviderRequest is the body of POST /v1/private-providers. ProviderVersion
// and FunctionGraphURN go together: with both, the first version is created too.
type CreatePrivateProviderRequest struct {
	ProviderName        string `json:"provider_name"`
	ProviderDescription string `json:"provider_description,omitempty"`
	ProviderVersion     string `json:"provider_version,omitempty"`
	VersionDescription  string `json:"version_description,omitempty"`
	FunctionGraphURN    string `json:"function_graph_urn,omitempty"`
	ProviderAgencyURN   string `json:"provider_agency_urn,omitempty"`
	ProviderAgencyName  string `json:"provider_agency_name,omitempty"`
}

// CreatePrivateProviderResponse is the 201 body of POST /v1/private-providers.
type CreatePrivateProviderResponse struct {
	ProviderID     string `json:"provider_id"`
	ProviderSource string `json:"provider_source"`
}

// PrivateProvider is an item of GET /v1/private-providers and the body of GET
// /v1/private-providers/{name}/metadata. Times are UTC with milliseconds
// (2006-01-02T15:04:05.000Z).
type PrivateProvider struct {
	ProviderID          string `json:"provider_id"`
	ProviderName        string `json:"provider_name"`
	ProviderDescription string `json:"provider_description"`
	ProviderSource      string `json:"provider_source"`
	ProviderAgencyURN   string `json:"provider_agency_urn,omitempty"`
	ProviderAgencyName  string `json:"provider_agency_name,omitempty"`
	CreateTime          string `json:"create_time"`
	UpdateTime          string `json:"update_time"`
}

// UpdatePrivateProviderRequest is the body of PATCH /v1/private-providers/{name}/metadata.
// A nil field (absent or null) keeps its value; "" clears the description.
type UpdatePrivateProviderRequest struct {
	ProviderDescription *string `json:"provider_description,omitempty"`
	ProviderID          string  `json:"provider_id,omitempty"`
}

// CreatePrivateProviderVersionRequest is the body of POST /v1/private-providers/{name}/versions.
type CreatePrivateProviderVersionRequest struct {
	ProviderID         string `json:"provider_id,omitempty"`
	ProviderVersion    string `json:"provider_version"`
	VersionDescription string `json:"version_description,omitempty"`
	FunctionGraphURN   string `json:"function_graph_urn"`
}

// PrivateProviderVersion is an item of GET /v1/private-providers/{name}/versions (without
// ProviderSource) and the body of GET .../versions/{version}/metadata (with it).
type PrivateProviderVersion struct {
	ProviderID         string `json:"provider_id"`
	ProviderName       string `json:"provider_name"`
	ProviderVersion    string `json:"provider_version"`
	VersionDescription string `json:"version_description"`
	FunctionGraphURN   string `json:"function_graph_urn"`
	CreateTime         string `json:"create_time"`
	ProviderSource     string `json:"provider_source,omitempty"`
}

// PageInfo says where a list page ends. NextMarker is absent on the last page.
type PageInfo struct {
	NextMarker   *string `json:"next_marker,omitempty"`
	CurrentCount int     `json:"current_count"`
}

// ListPrivateProvidersResponse is the 200 body of GET /v1/private-providers.
type ListPrivateProvidersResponse struct {
	Providers []PrivateProvider `json:"providers"`
	PageInfo  PageInfo          `json:"page_info"`
}

// ListPrivateProviderVersionsResponse is the 200 body of GET /v1/private-providers/{name}/versions.
type ListPrivateProviderVersionsResponse struct {
	Versions []PrivateProviderVersion `json:"versions"`
	PageInfo PageInfo                 `json:"page_info"`
}

// ListPrivateProvidersQuery is the query of the two list routes. Empty fields are not sent.
type ListPrivateProvidersQuery struct {
	SortKey []string // only "create_time"
	SortDir []string // "asc" or "desc", as many as SortKey
	Marker  string   // PageInfo.NextMarker of the previous page
	Limit   int      // 10..1000; 0: the server's default, 1000
}

// RFSError is the body of every 4xx and 5xx answer of /v1/private-providers. ErrorCode is
// "RF." and 8 digits; the codes are listed in docs/private-providers.md.
type RFSError struct {
	ErrorCode                   string           `json:"error_code"`
	ErrorMsg                    string           `json:"error_msg"`
	EncodedAuthorizationMessage string           `json:"encoded_authorization_message"`
	Details                     []RFSErrorDetail `json:"details"`
	// Status is the HTTP status it came with; not part of the body.
	Status int `json:"-"`
}

// RFSErrorDetail is an item of RFSError.Details.
type RFSErrorDetail struct {
	ErrorCode string `json:"error_code"`
	ErrorMsg  string `json:"error_msg"`
}

func (e *RFSError) Error() string { return e.ErrorMsg + " (" + e.ErrorCode + ")" }

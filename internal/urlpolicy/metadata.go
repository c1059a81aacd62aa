package urlpolicy

import "net/netip"

// Cloud metadata endpoints. Most providers serve instance metadata (and
// with it, often, the instance's credentials) at 169.254.169.254, which the
// link-local rule refuses along with the rest of 169.254.0.0/16 and
// fe80::/10. That covers, each per its documentation:
//   - AWS EC2 IMDS, 169.254.169.254:
//     https://docs.aws.amazon.com/whitepapers/latest/ipv6-on-aws/supporting-amazon-vpc-services.html
//   - Google Compute Engine, 169.254.169.254: "the documented metadata
//     server IP address" in Google's Go client, cloud.google.com/go/compute/metadata
//   - Azure IMDS, 169.254.169.254:
//     https://learn.microsoft.com/en-us/azure/virtual-machines/instance-metadata-service
//   - Oracle Cloud Infrastructure IMDS, 169.254.169.254:
//     https://docs.oracle.com/en-us/iaas/Content/Compute/Tasks/gettingmetadata.htm
//   - DigitalOcean, 169.254.169.254:
//     https://docs.digitalocean.com/products/droplets/how-to/access-metadata
//   - Hetzner Cloud, 169.254.169.254 (/hetzner/v1/metadata): as Hetzner
//     metadata clients cite https://docs.hetzner.cloud/#server-metadata
//     (the page itself was not at hand)
//   - IBM Cloud VPC, 169.254.169.254: https://cloud.ibm.com/apidocs/vpc-metadata
//   - Akamai (Linode), 169.254.169.254:
//     https://techdocs.akamai.com/cloud-computing/docs/metadata-service-api
//   - Scaleway, 169.254.42.42:
//     https://docs.cloud-init.io/en/latest/reference/datasources/scaleway.html
//   - OpenStack (Nova metadata), 169.254.169.254 and fe80::a9fe:a9fe:
//     https://specs.openstack.org/openstack/neutron-specs/specs/ussuri/metadata-add-ipv6-support.html
//   - Exoscale, 169.254.169.254:
//     https://community.exoscale.com/documentation/compute/private-instances/
//
// metadataPrefixes are the endpoints outside those ranges; each is refused
// wherever it is dialed, https included.
var metadataPrefixes = []netip.Prefix{
	// AWS: on Nitro instances IMDS is also at fd00:ec2::254, with the VPC
	// DNS resolver and NTP server beside it in the same block.
	// https://docs.aws.amazon.com/whitepapers/latest/ipv6-on-aws/supporting-amazon-vpc-services.html
	netip.MustParsePrefix("fd00:ec2::/32"),
	// Azure WireServer, the VM agent's and DNS's channel to the platform: a
	// public address that only Azure hosts answer.
	// https://learn.microsoft.com/en-us/azure/virtual-network/what-is-ip-address-168-63-129-16
	netip.MustParsePrefix("168.63.129.16/32"),
	// Alibaba Cloud ECS metadata.
	// https://www.alibabacloud.com/help/en/ecs/user-guide/view-instance-metadata
	netip.MustParsePrefix("100.100.100.200/32"),
	// Akamai (Linode) metadata over IPv6.
	// https://techdocs.akamai.com/cloud-computing/docs/metadata-service-api
	netip.MustParsePrefix("fd00:a9fe:a9fe::1/128"),
	// Scaleway metadata over IPv6.
	// https://docs.cloud-init.io/en/latest/reference/datasources/scaleway.html
	netip.MustParsePrefix("fd00:42::42/128"),
	// Google Compute Engine's metadata server for IPv6-only VMs. Not found
	// in the Google pages we could read; it is the address Google's IPv6
	// guidance and every SSRF guard we found use, and it is a unique-local
	// address nothing else serves.
	netip.MustParsePrefix("fd20:ce::254/128"),
	// Oracle Cloud Infrastructure IMDS over IPv6: the address Oracle's own
	// OKE node scripts fall back to after 169.254.169.254 (not found in
	// Oracle's documentation pages).
	netip.MustParsePrefix("fd00:c1::a9fe:a9fe/128"),
	// Oracle Cloud Infrastructure Classic metadata. From SSRF guards that
	// list it; Oracle's Classic documentation is no longer published.
	netip.MustParsePrefix("192.0.0.192/32"),
}

// metadataHosts are metadata endpoints' names, refused before any lookup.
// Their addresses are refused at dial time too; the names make the refusal
// say why, and keep a resolver that maps them elsewhere from mattering.
var metadataHosts = map[string]bool{
	// https://cloud.google.com/compute/docs/storing-retrieving-metadata
	"metadata.google.internal": true,
	// Tencent Cloud CVM: https://intl.cloud.tencent.com/document/product/213/4934
	"metadata.tencentyun.com": true,
	// IBM Cloud VPC: https://cloud.ibm.com/apidocs/vpc-metadata
	"api.metadata.cloud.ibm.com": true,
}

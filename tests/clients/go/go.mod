module quiver.dev/clienttest

go 1.21

require github.com/vesoft-inc/nebula-go/v3 v3.8.0

require (
	github.com/vesoft-inc/fbthrift v0.0.0-20230214024353-fa2f34755b28 // indirect
	golang.org/x/net v0.17.0 // indirect
	golang.org/x/text v0.13.0 // indirect
)

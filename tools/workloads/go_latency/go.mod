module incise/go_latency

go 1.19

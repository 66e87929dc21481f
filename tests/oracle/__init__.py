"""ns-3 as a standing oracle for lasthop (issue 9): scenario builders and the suite."""

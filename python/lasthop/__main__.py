from lasthop.cli import main

main()

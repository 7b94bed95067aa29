from readmit.cli import main

main()

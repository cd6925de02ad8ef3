print("credvault")
